// A greedy one-ply Tetress bot: it wins outright when it can, else leaves the opponent the
// fewest replies, then prefers more own tokens than the opponent's, then chooses at random.
#include <limits>
#include <random>

#include "tetromino/client.h"
#include "tetromino/tetress.h"

using tetromino::Board;

static double evaluate(const Board& after, int me) {
  const double win = std::numeric_limits<double>::infinity();
  int material = after.tokens(me) - after.tokens(1 - me);
  if (after.ply >= tetromino::kTurnLimit) return material > 0 ? win : material < 0 ? -win : 0.0;
  int replies = after.count_legal();
  if (replies == 0) return win;  // the opponent is to move and cannot: it loses
  return -replies + material / 1000.0;
}

int main(int argc, char** argv) {
  std::mt19937_64 rng(tetromino::seed_from_env());
  auto options = tetromino::options_from(argc, argv, "cpp-greedy");
  return tetromino::run(options, [&](const tetromino::Request& request) {
    Board board = Board::parse(request.position);
    auto moves = board.legal_moves();
    std::vector<tetromino::Placement> best;
    double best_score = -std::numeric_limits<double>::infinity();
    for (const auto& move : moves) {
      Board after = board;
      after.apply(move);
      double score = evaluate(after, board.to_move);
      if (best.empty() || score > best_score) best = {move}, best_score = score;
      else if (score == best_score) best.push_back(move);
    }
    std::uniform_int_distribution<size_t> pick(0, best.size() - 1);
    auto chosen = best.at(pick(rng));
    tetromino::Think think;
    think.depth = 1;
    think.nodes = moves.size();
    if (best_score > -1e9 && best_score < 1e9) think.score = best_score;
    think.pv = {tetromino::to_text(chosen)};
    think.text = std::to_string(best.size()) + " best of " + std::to_string(moves.size());
    return tetromino::Answer{tetromino::to_text(chosen), think};
  });
}
