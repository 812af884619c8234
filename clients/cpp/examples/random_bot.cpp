// A bot that plays a uniformly random legal Tetress placement.
#include <random>

#include "tetromino/client.h"
#include "tetromino/tetress.h"

int main(int argc, char** argv) {
  std::mt19937_64 rng(tetromino::seed_from_env());
  auto options = tetromino::options_from(argc, argv, "cpp-random");
  return tetromino::run(options, [&](const tetromino::Request& request) {
    auto moves = tetromino::Board::parse(request.position).legal_moves();
    std::uniform_int_distribution<size_t> pick(0, moves.size() - 1);
    tetromino::Think think;
    think.nodes = moves.size();
    think.text = "random among " + std::to_string(moves.size()) + " legal moves";
    return tetromino::Answer{tetromino::to_text(moves.at(pick(rng))), think};
  });
}
