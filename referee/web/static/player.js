// The replay player on a game page: play/pause at a chosen speed, a step slider, and chart
// columns and summary links that move the board without reloading the page. The replay
// fragment (#replay: clocks, board, controls, think record) is swapped by htmx on every step,
// so the player keeps its state here and re-reads the controls after each swap. The move list
// and the chart are on the page once: after each step the current ply is marked there (the
// list scrolls to it inside its own box, the chart's marker moves). No inline script: the
// content security policy.
(function () {
  "use strict";
  var BASE_MS = 1000;
  // Playing: the next step is scheduled only once the previous one is on the page, so a slow
  // answer delays the player instead of piling up requests; the wait counts from when the
  // step was asked for, so a quick answer keeps the chosen pace (4x: four plies a second).
  var playing = false;
  var timer = null;
  var speed = 1;
  var asked = 0;

  function replay() { return document.getElementById("replay"); }
  function gamePath() { return location.pathname.replace(/\/+$/, ""); }

  function go(ply) {
    var root = replay();
    if (!root || !window.htmx) { location.search = "?ply=" + ply; return; }
    var plies = parseInt(root.getAttribute("data-plies"), 10);
    ply = Math.max(0, Math.min(plies, ply));
    return window.htmx.ajax("GET", gamePath() + "/ply/" + ply, { target: "#replay", swap: "outerHTML" })
      .then(function () {
        history.pushState({}, "", gamePath() + "?ply=" + ply);
        if (playing) schedule();
      });
  }

  function schedule() {
    if (timer !== null) clearTimeout(timer);
    var waited = asked ? performance.now() - asked : 0;
    timer = setTimeout(tick, Math.max(0, BASE_MS / speed - waited));
  }

  function stop() {
    playing = false;
    if (timer !== null) { clearTimeout(timer); timer = null; }
    sync();
  }

  function tick() {
    var root = replay();
    if (!root) { stop(); return; }
    var ply = parseInt(root.getAttribute("data-ply"), 10);
    var plies = parseInt(root.getAttribute("data-plies"), 10);
    if (ply >= plies) { stop(); return; }
    asked = performance.now();
    go(ply + 1);
  }

  function start() {
    playing = true;
    asked = 0;
    schedule();
    sync();
  }

  // The controls are re-rendered with each step: show the player's state on the new ones.
  function sync() {
    var button = document.getElementById("play");
    if (button) button.textContent = playing ? "❚❚ pause" : "▶ play";
    var select = document.getElementById("speed");
    if (select) select.value = String(speed);
  }

  document.addEventListener("click", function (event) {
    var target = event.target;
    if (!target || !target.closest) return;
    if (target.closest("#play")) {
      event.preventDefault();
      if (playing) stop(); else start();
      return;
    }
    var link = target.closest("a.ply-link, a.ply-jump");
    if (!link || event.button !== 0 || event.ctrlKey || event.metaKey || event.shiftKey) return;
    if (!replay()) return;
    event.preventDefault();
    stop();
    go(parseInt(link.getAttribute("data-ply"), 10));
  });

  document.addEventListener("change", function (event) {
    var target = event.target;
    if (!target) return;
    if (target.id === "speed") {
      speed = parseFloat(target.value) || 1;
      asked = 0;
      if (playing) schedule();
    } else if (target.id === "ply-slider") {
      stop();
      go(parseInt(target.value, 10));
    }
  });

  document.addEventListener("keydown", function (event) {
    if (event.key !== " " || !replay()) return;
    var t = event.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA" || t.tagName === "BUTTON")) return;
    event.preventDefault();
    if (playing) stop(); else start();
  });

  // Mark the shown ply in the move list (scrolled into its box, the page itself left where
  // it is) and move the chart's marker to its column.
  function follow() {
    var root = replay();
    if (!root) return;
    var ply = root.getAttribute("data-ply");
    var rows = document.querySelectorAll("#moves tr.current");
    for (var i = 0; i < rows.length; i++) rows[i].classList.remove("current");
    var row = document.querySelector("#moves tr[data-ply='" + ply + "']");
    var box = row && row.closest(".moves-side");
    if (row) row.classList.add("current");
    if (row && box) {
      var r = row.getBoundingClientRect(), b = box.getBoundingClientRect();
      if (r.top < b.top || r.bottom > b.bottom) box.scrollTop += r.top - b.top - box.clientHeight / 3;
    }
    var column = document.querySelector("svg.game-chart a.ply-link[data-ply='" + ply + "'] rect");
    var marker = document.querySelector("svg.game-chart line.now");
    if (column && marker) {
      var x = String(parseFloat(column.getAttribute("x")) + parseFloat(column.getAttribute("width")) / 2);
      marker.setAttribute("x1", x);
      marker.setAttribute("x2", x);
    }
  }

  document.addEventListener("htmx:afterSwap", function () { sync(); follow(); });
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", follow);
  else follow();
  window.addEventListener("popstate", function () {
    var match = /[?&]ply=(\d+)/.exec(location.search);
    if (match && replay()) go(parseInt(match[1], 10));
  });
})();
