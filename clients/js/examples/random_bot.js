'use strict';
// A bot that plays a uniformly random legal Tetress placement.
const { optionsFrom, run, seededRandom } = require('../src/client');
const { Board, toText } = require('../src/tetress');

const random = seededRandom();
run(optionsFrom(process.argv.slice(2), 'js-random'), (request) => {
  const moves = Board.parse(request.position).legalMoves();
  const move = moves[Math.floor(random() * moves.length)];
  return { action: toText(move), think: { nodes: moves.length, text: `random among ${moves.length} legal moves` } };
});
