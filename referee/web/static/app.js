// Keyboard stepping through a replay: the arrow keys press the step buttons (htmx does the
// rest). No inline script anywhere: the pages' content security policy forbids it.
(function () {
  "use strict";
  var keys = { ArrowLeft: "step-prev", ArrowRight: "step-next", Home: "step-first", End: "step-last" };
  document.addEventListener("keydown", function (event) {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    var target = event.target;
    if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA" || target.isContentEditable)) return;
    var id = keys[event.key];
    if (!id || !document.getElementById("replay")) return;
    var button = document.getElementById(id);
    if (button && button.tagName === "A") {
      event.preventDefault();
      button.click();
    }
  });
})();
