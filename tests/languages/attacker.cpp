// A compiled attack bot for tests/languages/test_compiled_attacks.py: before playing (the C++
// client's random choice) it goes after the host named in its targets file, one line
// "key value" each, and prints "ATTACK name: BLOCKED" or "ATTACK name: ESCAPED".
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <string>

#include "tetromino/client.h"
#include "tetromino/tetress.h"

static void report(const std::string& name, bool escaped) {
  std::cout << "ATTACK " << name << ": " << (escaped ? "ESCAPED" : "BLOCKED") << std::endl;
}

static bool can_read(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  return in && std::getline(in, line).good();
}

static void attack(std::map<std::string, std::string>& t) {
  report("shadow", can_read("/etc/shadow"));
  report("database", can_read(t["database"]));
  report("referee_code", can_read(t["referee_code"]));
  const char* env = std::getenv("TETROMINO_DATABASE_URL");
  report("environ", env != nullptr);
  int fd = open(t["write_target"].c_str(), O_WRONLY | O_CREAT, 0644);
  report("write", fd >= 0);
  if (fd >= 0) close(fd);
  int sock = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(t["tcp_port"])));
  inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
  report("connect", sock >= 0 && connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  if (sock >= 0) close(sock);
  report("kill_referee", kill(std::stoi(t["referee_pid"]), SIGSTOP) == 0);
  report("kill_opponent", kill(std::stoi(t["opponent_pid"]), SIGSTOP) == 0);
  std::cout << "ATTACKS DONE" << std::endl;
}

int main(int argc, char** argv) {
  std::map<std::string, std::string> targets;
  std::ifstream in(argc > 1 ? argv[1] : "targets.txt");
  for (std::string key, value; in >> key >> value;) targets[key] = value;
  attack(targets);
  std::mt19937_64 rng(1);
  auto options = tetromino::options_from(1, argv, "cpp-attacker");
  return tetromino::run(options, [&](const tetromino::Request& request) {
    auto moves = tetromino::Board::parse(request.position).legal_moves();
    return tetromino::Answer{tetromino::to_text(moves.at(rng() % moves.size())), std::nullopt};
  });
}
