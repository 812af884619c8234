// A live game: follows /live/<uid>/events (Server-Sent Events), appends each move, swaps the
// board picture (an SVG the server rendered and escaped) and counts the mover's clock down.
(function () {
  "use strict";
  var root = document.getElementById("live");
  if (!root) return;
  var board = document.getElementById("live-board");
  var moves = document.querySelector("#moves tbody");
  var verdict = document.getElementById("verdict");
  var plyText = document.getElementById("live-ply");
  var seatNames = [];
  var clocks = [null, null];
  var toMove = null;
  var since = performance.now();
  var over = false;

  function fmt(s) {
    if (s === null || s === undefined) return "—";
    var tenths = Math.round(Math.max(0, s) * 10);
    var m = Math.floor(tenths / 600);
    var r = tenths - 600 * m;
    var whole = Math.floor(r / 10);
    return m + ":" + (whole < 10 ? "0" : "") + whole + "." + (r % 10);
  }
  function showClocks() {
    for (var i = 0; i < 2; i++) {
      var el = document.getElementById("clock-" + i);
      if (!el) continue;
      var left = clocks[i];
      var running = !over && seatNames[i] === toMove;
      if (running && left !== null) left -= (performance.now() - since) / 1000;
      el.querySelector(".time").textContent = fmt(left);
      el.classList.toggle("to-move", running);
    }
  }
  function addMove(m) {
    var tr = document.createElement("tr");
    [String(m.ply), m.seat_name, m.move, m.time_s.toFixed(3) + " s"].forEach(function (text, i) {
      var td = document.createElement("td");
      td.textContent = text;
      if (i === 0 || i === 3) td.className = "num";
      else if (i === 2) td.className = "mv";
      tr.appendChild(td);
    });
    moves.appendChild(tr);
    plyText.textContent = "ply " + m.ply;
    // Follow the newest move (the list scrolls inside its own box).
    var box = moves.closest(".moves-side");
    if (box) box.scrollTop = box.scrollHeight;
  }
  // A move event carries the board as rows of cell characters, not a new picture: the pieces
  // of the server's SVG are redrawn here the way the server draws them (engine/render/svg.py).
  var SVGNS = "http://www.w3.org/2000/svg";
  function shape(name, attrs) {
    var el = document.createElementNS(SVGNS, name);
    Object.keys(attrs).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    return el;
  }
  function redraw(data) {
    var svg = board.querySelector("svg");
    var frame = svg && svg.querySelector("rect.board");
    if (!frame || !data.grid.length) return;
    var x0 = +frame.getAttribute("x"), y0 = +frame.getAttribute("y");
    var cell = +frame.getAttribute("width") / data.grid[0].length;
    svg.querySelectorAll(".piece, rect.last").forEach(function (el) { el.remove(); });
    var status = svg.querySelector("text.status");
    data.grid.forEach(function (row, r) {
      for (var c = 0; c < row.length; c++) {
        var ch = row.charAt(c);
        if (ch === ".") continue;
        var look = data.palette[ch] || ["c" + ch.charCodeAt(0), "#888888"];
        var x = x0 + c * cell, y = y0 + r * cell;
        var common = { "class": "piece " + look[0], "data-cell": r + "," + c, fill: look[1], stroke: "#333333", "stroke-width": "0.75" };
        var el = data.tokens
          ? shape("circle", Object.assign(common, { cx: x + cell / 2, cy: y + cell / 2, r: cell * 0.4 }))
          : shape("rect", Object.assign(common, { x: x + 1, y: y + 1, width: cell - 2, height: cell - 2, rx: 2 }));
        svg.insertBefore(el, status);
      }
    });
    data.last.forEach(function (rc) {
      svg.insertBefore(shape("rect", { "class": "last", "data-cell": rc[0] + "," + rc[1], x: x0 + rc[1] * cell + 1.5, y: y0 + rc[0] * cell + 1.5, width: cell - 3, height: cell - 3, fill: "none", stroke: "#f2b705", "stroke-width": 3 }), status);
    });
    if (status) status.textContent = data.status;
  }
  function update(data) {
    if (data.board) board.innerHTML = data.board;
    else if (data.grid) redraw(data);
    if (data.clocks && data.clocks.length === 2) clocks = data.clocks.slice();
    if (data.to_move) toMove = data.to_move;
    since = performance.now();
    showClocks();
  }
  var source = new EventSource(root.getAttribute("data-events"));
  source.addEventListener("start", function (e) {
    var data = JSON.parse(e.data);
    seatNames = data.seat_names;
    moves.textContent = "";
    data.moves.forEach(addMove);
    verdict.textContent = "playing";
    update(data);
  });
  source.addEventListener("move", function (e) {
    var data = JSON.parse(e.data);
    addMove(data);
    update(data);
  });
  source.addEventListener("end", function (e) {
    var data = JSON.parse(e.data);
    over = true;
    verdict.textContent = data.result + " · " + data.sentence + " ";
    var stored = document.createElement("a");
    stored.id = "stored-game";
    stored.href = "/games/uid/" + encodeURIComponent(root.getAttribute("data-uid") || "");
    stored.textContent = "the stored game: replay, chart and why it ended";
    verdict.appendChild(stored);
    verdict.classList.add("ended");
    root.classList.add("ended");
    source.close();
    showClocks();
  });
  source.onerror = function () {
    if (!over) verdict.textContent = "connection lost; retrying…";
  };
  setInterval(function () { if (!over) showClocks(); }, 100);
})();
