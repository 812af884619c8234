'use strict';
// Tetress rules for bots: the position string, legal placements, applying one
// (docs/tetress.md: 11x11 torus, 19 fixed tetrominoes, own-colour contact after ply 1,
// full rows and columns cleared, 150 plies at most).

const SIZE = 11;
const CELLS = SIZE * SIZE;
const TURN_LIMIT = 150;

// The 19 fixed tetrominoes: the seven pieces in every distinct rotation, moved to (0, 0).
function makeShapes() {
  const pieces = [
    [[0, 0], [0, 1], [0, 2], [0, 3]], // I
    [[0, 0], [0, 1], [1, 0], [1, 1]], // O
    [[0, 0], [0, 1], [0, 2], [1, 1]], // T
    [[0, 0], [1, 0], [1, 1], [1, 2]], // J
    [[0, 2], [1, 0], [1, 1], [1, 2]], // L
    [[0, 1], [0, 2], [1, 0], [1, 1]], // S
    [[0, 0], [0, 1], [1, 1], [1, 2]], // Z
  ];
  const seen = new Set();
  const shapes = [];
  for (let shape of pieces) {
    for (let turn = 0; turn < 4; turn++) {
      const minR = Math.min(...shape.map(([r]) => r));
      const minC = Math.min(...shape.map(([, c]) => c));
      const norm = shape.map(([r, c]) => [r - minR, c - minC]).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      const key = JSON.stringify(norm);
      if (!seen.has(key)) {
        seen.add(key);
        shapes.push(norm);
      }
      shape = shape.map(([r, c]) => [c, -r]);
    }
  }
  return shapes;
}

// Every placement on the torus (19 shapes x 121 anchors), cells ascending.
const PLACEMENTS = [];
for (const shape of makeShapes()) {
  for (let r = 0; r < SIZE; r++) {
    for (let c = 0; c < SIZE; c++) {
      PLACEMENTS.push(
        shape.map(([dr, dc]) => ((r + dr) % SIZE) * SIZE + ((c + dc) % SIZE)).sort((a, b) => a - b),
      );
    }
  }
}

function neighbours(cell) {
  const r = Math.floor(cell / SIZE);
  const c = cell % SIZE;
  return [
    ((r + 1) % SIZE) * SIZE + c,
    ((r + SIZE - 1) % SIZE) * SIZE + c,
    r * SIZE + ((c + 1) % SIZE),
    r * SIZE + ((c + SIZE - 1) % SIZE),
  ];
}

class Board {
  constructor(cells, toMove, ply) {
    this.cells = cells; // array of '.', 'r', 'b'
    this.toMove = toMove; // 0 RED, 1 BLUE
    this.ply = ply;
  }

  // Reads "<row0>/.../<row10> <side> <ply>"; throws on a malformed string.
  static parse(position) {
    const [rows, side, ply] = position.trim().split(/\s+/);
    const lines = (rows || '').split('/');
    if (lines.length !== SIZE || lines.some((l) => !/^[.rb]{11}$/.test(l)) || !/^[rb]$/.test(side || '')) {
      throw new Error(`malformed position: ${position}`);
    }
    return new Board(lines.join('').split(''), side === 'b' ? 1 : 0, Number(ply));
  }

  clone() {
    return new Board(this.cells.slice(), this.toMove, this.ply);
  }

  // The turn limit is the referee's to apply (a game may set another): never checked here.
  legalMoves() {
    const own = this.toMove === 0 ? 'r' : 'b';
    const touches = new Uint8Array(CELLS);
    if (this.ply >= 2) {
      for (let cell = 0; cell < CELLS; cell++) {
        if (this.cells[cell] === own) for (const n of neighbours(cell)) touches[n] = 1;
      }
    } else {
      touches.fill(1);
    }
    const cells = this.cells;
    return PLACEMENTS.filter(
      (p) =>
        cells[p[0]] === '.' && cells[p[1]] === '.' && cells[p[2]] === '.' && cells[p[3]] === '.' &&
        (touches[p[0]] || touches[p[1]] || touches[p[2]] || touches[p[3]]),
    );
  }

  // Places the piece for the side to move, clears full lines, passes the turn.
  apply(move) {
    for (const cell of move) this.cells[cell] = this.toMove === 0 ? 'r' : 'b';
    const clear = new Uint8Array(CELLS);
    for (let i = 0; i < SIZE; i++) {
      let row = true;
      let col = true;
      for (let j = 0; j < SIZE; j++) {
        row = row && this.cells[i * SIZE + j] !== '.';
        col = col && this.cells[j * SIZE + i] !== '.';
      }
      for (let j = 0; j < SIZE; j++) {
        if (row) clear[i * SIZE + j] = 1;
        if (col) clear[j * SIZE + i] = 1;
      }
    }
    for (let cell = 0; cell < CELLS; cell++) if (clear[cell]) this.cells[cell] = '.';
    this.toMove = 1 - this.toMove;
    this.ply += 1;
  }

  tokens(seat) {
    const colour = seat === 0 ? 'r' : 'b';
    return this.cells.filter((x) => x === colour).length;
  }
}

// PLACE(r-c, r-c, r-c, r-c) with the cells in ascending order.
function toText(move) {
  const cells = move.slice().sort((a, b) => a - b);
  return `PLACE(${cells.map((x) => `${Math.floor(x / SIZE)}-${x % SIZE}`).join(', ')})`;
}

module.exports = { Board, toText, TURN_LIMIT, PLACEMENTS };
