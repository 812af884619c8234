#include "tetromino/tetress.h"

#include <algorithm>
#include <set>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace tetromino {
namespace {

using Shape = std::array<std::pair<int, int>, 4>;

// The 19 fixed tetrominoes: the seven pieces in every distinct rotation, each moved so that
// its bounding box starts at (0, 0).
std::vector<Shape> make_shapes() {
  const std::vector<Shape> pieces = {
      Shape{{{0, 0}, {0, 1}, {0, 2}, {0, 3}}},  // I
      Shape{{{0, 0}, {0, 1}, {1, 0}, {1, 1}}},  // O
      Shape{{{0, 0}, {0, 1}, {0, 2}, {1, 1}}},  // T
      Shape{{{0, 0}, {1, 0}, {1, 1}, {1, 2}}},  // J
      Shape{{{0, 2}, {1, 0}, {1, 1}, {1, 2}}},  // L
      Shape{{{0, 1}, {0, 2}, {1, 0}, {1, 1}}},  // S
      Shape{{{0, 0}, {0, 1}, {1, 1}, {1, 2}}},  // Z
  };
  std::set<Shape> seen;
  std::vector<Shape> shapes;
  for (Shape s : pieces) {
    for (int turn = 0; turn < 4; ++turn) {
      int min_r = 99, min_c = 99;
      for (auto& [r, c] : s) min_r = std::min(min_r, r), min_c = std::min(min_c, c);
      Shape norm = s;
      for (auto& [r, c] : norm) r -= min_r, c -= min_c;
      std::sort(norm.begin(), norm.end());
      if (seen.insert(norm).second) shapes.push_back(norm);
      for (auto& [r, c] : s) r = std::exchange(c, -r);
    }
  }
  return shapes;
}

// Every placement on the torus (19 shapes x 121 anchors), cells ascending.
const std::vector<Placement>& all_placements() {
  static const std::vector<Placement> all = [] {
    std::vector<Placement> out;
    for (const Shape& shape : make_shapes())
      for (int r = 0; r < kSize; ++r)
        for (int c = 0; c < kSize; ++c) {
          Placement p;
          for (int i = 0; i < 4; ++i)
            p[i] = ((r + shape[i].first) % kSize) * kSize + (c + shape[i].second) % kSize;
          std::sort(p.begin(), p.end());
          out.push_back(p);
        }
    return out;
  }();
  return all;
}

int neighbour(int cell, int dr, int dc) {
  int r = (cell / kSize + dr + kSize) % kSize, c = (cell % kSize + dc + kSize) % kSize;
  return r * kSize + c;
}

}  // namespace

Board Board::parse(const std::string& position) {
  std::istringstream in(position);
  std::string rows, side;
  Board b;
  if (!(in >> rows >> side >> b.ply) || rows.size() != kSize * (kSize + 1) - 1)
    throw std::invalid_argument("malformed position: " + position);
  for (int r = 0; r < kSize; ++r)
    for (int c = 0; c < kSize; ++c) {
      char ch = rows[r * (kSize + 1) + c];
      if (ch != '.' && ch != 'r' && ch != 'b') throw std::invalid_argument("bad cell in " + position);
      b.cells[r * kSize + c] = ch;
    }
  b.to_move = side == "b" ? 1 : 0;
  return b;
}

std::vector<Placement> Board::legal_moves() const {
  // The turn limit is the referee's to apply (a game may set another): never checked here.
  std::vector<Placement> out;
  const char own = to_move == 0 ? 'r' : 'b';
  const bool first = ply < 2;
  std::array<bool, kCells> touches{};
  for (int cell = 0; cell < kCells; ++cell)
    if (cells[cell] == own)
      for (auto [dr, dc] : {std::pair{1, 0}, {-1, 0}, {0, 1}, {0, -1}})
        touches[neighbour(cell, dr, dc)] = true;
  for (const Placement& p : all_placements()) {
    bool empty = true, touching = first;
    for (int cell : p) {
      empty = empty && cells[cell] == '.';
      touching = touching || touches[cell];
    }
    if (empty && touching) out.push_back(p);
  }
  return out;
}

int Board::count_legal() const { return static_cast<int>(legal_moves().size()); }

void Board::apply(const Placement& move) {
  for (int cell : move) cells[cell] = to_move == 0 ? 'r' : 'b';
  std::array<bool, kCells> clear{};
  for (int i = 0; i < kSize; ++i) {
    bool row = true, col = true;
    for (int j = 0; j < kSize; ++j) {
      row = row && cells[i * kSize + j] != '.';
      col = col && cells[j * kSize + i] != '.';
    }
    for (int j = 0; j < kSize; ++j) {
      if (row) clear[i * kSize + j] = true;
      if (col) clear[j * kSize + i] = true;
    }
  }
  for (int cell = 0; cell < kCells; ++cell)
    if (clear[cell]) cells[cell] = '.';
  to_move = 1 - to_move;
  ++ply;
}

int Board::tokens(int seat) const {
  return static_cast<int>(std::count(cells.begin(), cells.end(), seat == 0 ? 'r' : 'b'));
}

std::string to_text(Placement move) {
  std::sort(move.begin(), move.end());
  std::ostringstream out;
  out << "PLACE(";
  for (int i = 0; i < 4; ++i)
    out << (i ? ", " : "") << move[i] / kSize << '-' << move[i] % kSize;
  out << ')';
  return out.str();
}

}  // namespace tetromino
