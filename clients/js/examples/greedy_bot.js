'use strict';
// A greedy one-ply Tetress bot: it wins outright when it can, else leaves the opponent the
// fewest replies, then prefers more own tokens than the opponent's, then chooses at random.
const { optionsFrom, run, seededRandom } = require('../src/client');
const { Board, toText, TURN_LIMIT } = require('../src/tetress');

function evaluate(after, me) {
  const material = after.tokens(me) - after.tokens(1 - me);
  if (after.ply >= TURN_LIMIT) return Math.sign(material) * Infinity || 0;
  const replies = after.legalMoves().length;
  if (replies === 0) return Infinity; // the opponent is to move and cannot: it loses
  return -replies + material / 1000;
}

const random = seededRandom();
run(optionsFrom(process.argv.slice(2), 'js-greedy'), (request) => {
  const board = Board.parse(request.position);
  const moves = board.legalMoves();
  let best = [];
  let bestScore = -Infinity;
  for (const move of moves) {
    const after = board.clone();
    after.apply(move);
    const score = evaluate(after, board.toMove);
    if (best.length === 0 || score > bestScore) {
      best = [move];
      bestScore = score;
    } else if (score === bestScore) {
      best.push(move);
    }
  }
  const chosen = best[Math.floor(random() * best.length)];
  const think = { depth: 1, nodes: moves.length, pv: [toText(chosen)], text: `${best.length} best of ${moves.length}` };
  if (Number.isFinite(bestScore)) think.score = bestScore;
  return { action: toText(chosen), think };
});
