// A bot client for the Tetromino Arena referee (protocol docs/protocol.md): one Play stream,
// the handshake, move requests answered by the bot's function, reconnects with the session.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tetromino {

struct Options {
  std::string server;  // HOST:PORT, HOST (port 50051) or unix:/path
  std::string token;
  std::string name = "cpp-bot";
  std::string version = "0";
};

// --server, --token-file FILE, --token T, --name N; else TETROMINO_SERVER and
// TETROMINO_TOKEN_FILE, then TETROMINO_TOKEN (the Python SDK's conventions). Exits with
// status 2 and a message when no server is given or the token file cannot be read.
Options options_from(int argc, char** argv, const std::string& default_name);

struct Request {
  std::string game_id;
  std::string game;      // GameSpec.name, e.g. "tetress"
  int seat = 0;          // 0 RED, 1 BLUE
  uint32_t ply = 0;
  std::string position;  // the authoritative position string
  double move_time_limit_s = 0;  // 0: no per-move limit
};

// What the bot thought (every field optional; shown to the bot's owner on the game page).
struct Think {
  std::optional<uint32_t> depth;
  std::optional<uint64_t> nodes;
  std::optional<double> score;
  std::vector<std::string> pv;
  std::string text;
};

struct Answer {
  std::string action;  // long text form, e.g. PLACE(5-5, 5-6, 6-6, 7-6)
  std::optional<Think> think;
};

using Chooser = std::function<Answer(const Request&)>;

// Plays until the referee says goodbye (returns 0) or refuses the session (returns 1).
int run(const Options& options, const Chooser& choose);

// A seed for the bot's random choices: TETROMINO_SEED when set, else from the clock.
uint64_t seed_from_env();

}  // namespace tetromino
