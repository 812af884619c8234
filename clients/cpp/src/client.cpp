#include "tetromino/client.h"

#include <grpcpp/grpcpp.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "tetromino/referee/v1/referee.grpc.pb.h"

namespace tetromino {
namespace pb = ::tetromino::referee::v1;

namespace {

std::string trim(const std::string& text) {
  auto start = text.find_first_not_of(" \t\r\n");
  auto end = text.find_last_not_of(" \t\r\n");
  return start == std::string::npos ? "" : text.substr(start, end - start + 1);
}

std::string read_token_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "cannot read the token file " << path << "\n";
    std::exit(2);
  }
  std::stringstream text;
  text << in.rdbuf();
  return trim(text.str());
}

std::string with_port(const std::string& server) {
  if (server.rfind("unix:", 0) == 0 || server.find(':') != std::string::npos) return server;
  return server + ":50051";
}

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

uint64_t peak_rss_bytes() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<uint64_t>(usage.ru_maxrss) * 1024;
}

bool final_refusal(pb::ErrorCode code) {
  return code == pb::ERROR_CODE_UNAUTHENTICATED || code == pb::ERROR_CODE_UNSUPPORTED_PROTOCOL ||
         code == pb::ERROR_CODE_NO_GAMES || code == pb::ERROR_CODE_DUPLICATE_SESSION;
}

enum class Ended { Goodbye, Refused, Dropped };

class Session {
 public:
  Session(const Options& options, const Chooser& choose) : options_(options), choose_(choose) {}

  int run() {
    grpc::ChannelArguments args;
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 20000);
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 10000);
    auto channel = grpc::CreateCustomChannel(with_port(options_.server),
                                             grpc::InsecureChannelCredentials(), args);
    auto stub = pb::Referee::NewStub(channel);
    int delay_s = 1;
    for (int attempt = 0; attempt < 10; ++attempt) {
      Ended ended = play_once(*stub);
      if (ended == Ended::Goodbye) return 0;
      if (ended == Ended::Refused) return 1;
      std::cerr << "connection lost; trying again in " << delay_s << " s\n";
      std::this_thread::sleep_for(std::chrono::seconds(delay_s));
      delay_s = std::min(delay_s * 2, 30);
    }
    std::cerr << "gave up reconnecting\n";
    return 1;
  }

 private:
  using Stream = grpc::ClientReaderWriter<pb::BotMessage, pb::RefereeMessage>;

  Ended play_once(pb::Referee::Stub& stub) {
    grpc::ClientContext context;
    std::unique_ptr<Stream> stream = stub.Play(&context);
    pb::BotMessage hello;
    pb::Hello* h = hello.mutable_hello();
    h->set_bot_name(options_.name);
    h->set_bot_version(options_.version);
    h->set_token(options_.token);
    h->set_sdk_version("tetromino-cpp 0.1");
    h->set_protocol_version(pb::PROTOCOL_VERSION_CURRENT);
    h->set_max_games(1);
    h->set_resume_session_id(session_id_);
    if (!stream->Write(hello)) return Ended::Dropped;
    pb::RefereeMessage message;
    while (stream->Read(&message)) {
      std::optional<Ended> ended = handle(message, *stream);
      if (ended) {
        stream->WritesDone();
        context.TryCancel();
        return *ended;
      }
    }
    stream->Finish();
    return Ended::Dropped;
  }

  std::optional<Ended> handle(const pb::RefereeMessage& message, Stream& stream) {
    switch (message.kind_case()) {
      case pb::RefereeMessage::kWelcome:
        if (message.welcome().protocol_version() != pb::PROTOCOL_VERSION_CURRENT) {
          std::cerr << "the referee speaks protocol version " << message.welcome().protocol_version()
                    << ", this client " << pb::PROTOCOL_VERSION_CURRENT << "\n";
          return Ended::Refused;
        }
        if (message.welcome().session_id() != session_id_) games_.clear();
        session_id_ = message.welcome().session_id();
        std::cerr << "connected as " << message.welcome().bot_name() << "\n";
        return std::nullopt;
      case pb::RefereeMessage::kGameStart: {
        const auto& info = message.game_start().info();
        games_[message.game_start().game_id()] = {info.game().name(), static_cast<int>(info.seat())};
        return std::nullopt;
      }
      case pb::RefereeMessage::kMoveRequest:
        answer(message.move_request(), stream);
        return std::nullopt;
      case pb::RefereeMessage::kGameOver:
        std::cerr << "game " << message.game_over().game_id() << ": " << message.game_over().result()
                  << " " << message.game_over().reason() << "\n";
        games_.erase(message.game_over().game_id());
        return std::nullopt;
      case pb::RefereeMessage::kError: {
        const auto& error = message.error();
        std::cerr << "referee error " << pb::ErrorCode_Name(error.code()) << ": " << error.message() << "\n";
        if (error.fatal() && final_refusal(error.code())) return Ended::Refused;
        if (error.fatal()) return Ended::Dropped;
        return std::nullopt;
      }
      case pb::RefereeMessage::kGoodbye:
        return Ended::Goodbye;
      default:  // a kind this client does not know (or none): ignored, as the protocol asks
        return std::nullopt;
    }
  }

  void answer(const pb::MoveRequest& request, Stream& stream) {
    auto game = games_.find(request.game_id());
    if (game == games_.end()) return;  // not a game of ours: ignored
    Request req{request.game_id(), game->second.first, game->second.second, request.ply(),
                request.position(), request.move_time_limit_s()};
    auto start = std::chrono::steady_clock::now();
    pb::BotMessage reply;
    pb::Move* move = reply.mutable_move();
    move->set_game_id(request.game_id());
    move->set_ply(request.ply());
    try {
      Answer answer = choose_(req);
      move->set_action(answer.action);
      if (answer.think) fill_think(*answer.think, move->mutable_think());
    } catch (const std::exception& failure) {
      pb::BotMessage error;
      error.mutable_error()->set_code(pb::ERROR_CODE_BOT_RUNTIME_ERROR);
      error.mutable_error()->set_game_id(request.game_id());
      error.mutable_error()->set_message(failure.what());
      stream.Write(error);
      return;
    }
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    move->set_think_time_s(took.count());
    move->set_peak_rss_bytes(peak_rss_bytes());
    stream.Write(reply);
  }

  static void fill_think(const Think& think, pb::ThinkRecord* out) {
    if (think.depth) out->set_depth(*think.depth);
    if (think.nodes) out->set_nodes(*think.nodes);
    if (think.score) out->set_score(*think.score);
    for (const auto& move : think.pv) out->add_pv(move);
    out->set_text(think.text);
  }

  const Options& options_;
  const Chooser& choose_;
  std::string session_id_;
  std::map<std::string, std::pair<std::string, int>> games_;  // game id -> (game, seat)
};

}  // namespace

Options options_from(int argc, char** argv, const std::string& default_name) {
  Options options;
  options.name = default_name;
  std::string token_file, token;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--server") options.server = value;
    else if (flag == "--token-file") token_file = value;
    else if (flag == "--token") token = value;
    else if (flag == "--name") options.name = value;
    else {
      std::cerr << "unknown option " << flag << "\n";
      std::exit(2);
    }
  }
  if (options.server.empty() && env("TETROMINO_SERVER")) options.server = env("TETROMINO_SERVER");
  if (token_file.empty() && token.empty() && env("TETROMINO_TOKEN_FILE"))
    token_file = env("TETROMINO_TOKEN_FILE");
  if (!token_file.empty()) options.token = read_token_file(token_file);
  else if (!token.empty()) options.token = token;
  else if (env("TETROMINO_TOKEN")) options.token = trim(env("TETROMINO_TOKEN"));
  if (options.server.empty()) {
    std::cerr << "usage: " << argv[0] << " --server HOST:PORT [--token-file FILE] (or TETROMINO_SERVER)\n";
    std::exit(2);
  }
  return options;
}

int run(const Options& options, const Chooser& choose) { return Session(options, choose).run(); }

uint64_t seed_from_env() {
  if (const char* seed = env("TETROMINO_SEED")) return std::strtoull(seed, nullptr, 10);
  return std::random_device{}();
}

}  // namespace tetromino
