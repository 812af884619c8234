// Tetress rules for bots: the position string, legal placements, applying one.
// (docs/tetress.md: 11x11 torus, 19 fixed tetrominoes, own-colour contact after ply 1,
// full rows and columns cleared, 150 plies at most.)
#pragma once

#include <array>
#include <string>
#include <vector>

namespace tetromino {

constexpr int kSize = 11;
constexpr int kCells = kSize * kSize;
constexpr int kTurnLimit = 150;

// Four cell indices (r * 11 + c).
using Placement = std::array<int, 4>;

struct Board {
  std::array<char, kCells> cells{};  // '.', 'r' or 'b'
  int to_move = 0;                    // 0 RED, 1 BLUE
  int ply = 0;

  // Reads "<row0>/.../<row10> <side> <ply>"; throws std::invalid_argument when malformed.
  static Board parse(const std::string& position);
  std::vector<Placement> legal_moves() const;
  int count_legal() const;
  // Places the piece for the side to move, clears full lines, passes the turn.
  void apply(const Placement& move);
  int tokens(int seat) const;
};

// PLACE(r-c, r-c, r-c, r-c) with the cells in ascending order.
std::string to_text(Placement move);

}  // namespace tetromino
