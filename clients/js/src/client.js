'use strict';
// A bot client for the Tetromino Arena referee (docs/protocol.md): one Play stream, the
// handshake, move requests answered by the bot's function, reconnects with the session.

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

// The protocol files: TETROMINO_PROTOS, else the copy `npm ci` made in this folder, else the
// repository's protos/.
const PROTOS = [
  process.env.TETROMINO_PROTOS,
  path.join(__dirname, '..', 'protos'),
  path.join(__dirname, '..', '..', '..', 'protos'),
].find((folder) => folder && fs.existsSync(path.join(folder, 'tetromino', 'referee', 'v1', 'referee.proto')));
const definition = protoLoader.loadSync('tetromino/referee/v1/referee.proto', {
  includeDirs: [PROTOS],
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});
const v1 = grpc.loadPackageDefinition(definition).tetromino.referee.v1;
const PROTOCOL_VERSION = definition['tetromino.referee.v1.ProtocolVersion'].type.value.find(
  (v) => v.name === 'PROTOCOL_VERSION_CURRENT',
).number;
// Refusals that another try would only repeat (docs/protocol.md#admission).
const FINAL = new Set([
  'ERROR_CODE_UNAUTHENTICATED',
  'ERROR_CODE_UNSUPPORTED_PROTOCOL',
  'ERROR_CODE_NO_GAMES',
  'ERROR_CODE_DUPLICATE_SESSION',
]);

// --server, --token-file FILE, --token T, --name N; else TETROMINO_SERVER and
// TETROMINO_TOKEN_FILE, then TETROMINO_TOKEN (the Python SDK's conventions).
function optionsFrom(argv, defaultName) {
  const given = {};
  for (let i = 0; i + 1 < argv.length; i += 2) {
    const flag = argv[i].replace(/^--/, '');
    if (!['server', 'token-file', 'token', 'name'].includes(flag)) {
      console.error(`unknown option ${argv[i]}`);
      process.exit(2);
    }
    given[flag] = argv[i + 1];
  }
  const env = (name) => process.env[name] || '';
  const server = given.server || env('TETROMINO_SERVER');
  if (!server) {
    console.error('usage: node BOT.js --server HOST:PORT [--token-file FILE] (or TETROMINO_SERVER)');
    process.exit(2);
  }
  let token = '';
  const tokenFile = given['token-file'] || (given.token ? '' : env('TETROMINO_TOKEN_FILE'));
  if (tokenFile) {
    try {
      token = fs.readFileSync(tokenFile, 'utf8').trim();
    } catch (err) {
      console.error(`cannot read the token file ${tokenFile}: ${err.message}`);
      process.exit(2);
    }
  } else {
    token = (given.token || env('TETROMINO_TOKEN')).trim();
  }
  const address = server.startsWith('unix:') || server.includes(':') ? server : `${server}:50051`;
  return { server: address, token, name: given.name || defaultName, version: '0' };
}

// One stream: resolves 'goodbye', 'refused' or 'dropped'.
function playOnce(client, options, state, choose) {
  return new Promise((resolve) => {
    const call = client.Play();
    let settled = false;
    const finish = (how) => {
      if (settled) return;
      settled = true;
      call.end();
      if (how !== 'goodbye') call.cancel();
      resolve(how);
    };
    call.on('error', () => finish('dropped'));
    call.on('end', () => finish('dropped'));
    call.on('data', (message) => {
      const how = handle(message, state, choose, (reply) => call.write(reply));
      if (how) finish(how);
    });
    call.write({
      hello: {
        bot_name: options.name,
        bot_version: options.version,
        token: options.token,
        sdk_version: `tetromino-js 0.1 node/${process.versions.node}`,
        protocol_version: PROTOCOL_VERSION,
        max_games: 1,
        resume_session_id: state.sessionId,
      },
    });
  });
}

function handle(message, state, choose, send) {
  switch (message.kind) {
    case 'welcome': {
      const w = message.welcome;
      if (w.protocol_version !== PROTOCOL_VERSION) {
        console.error(`the referee speaks protocol version ${w.protocol_version}, this client ${PROTOCOL_VERSION}`);
        return 'refused';
      }
      if (w.session_id !== state.sessionId) state.games.clear();
      state.sessionId = w.session_id;
      console.error(`connected as ${w.bot_name}`);
      return null;
    }
    case 'game_start': {
      const info = message.game_start.info;
      state.games.set(message.game_start.game_id, { game: info.game.name, seat: info.seat });
      return null;
    }
    case 'move_request':
      answer(message.move_request, state, choose, send);
      return null;
    case 'game_over':
      console.error(`game ${message.game_over.game_id}: ${message.game_over.result} ${message.game_over.reason}`);
      state.games.delete(message.game_over.game_id);
      return null;
    case 'error': {
      const e = message.error;
      console.error(`referee error ${e.code}: ${e.message}`);
      if (e.fatal) return FINAL.has(e.code) ? 'refused' : 'dropped';
      return null;
    }
    case 'goodbye':
      return 'goodbye';
    default: // a kind this client does not know (or none): ignored, as the protocol asks
      return null;
  }
}

function answer(request, state, choose, send) {
  const game = state.games.get(request.game_id);
  if (!game) return; // not a game of ours: ignored
  const started = process.hrtime.bigint();
  let reply;
  try {
    reply = choose({
      gameId: request.game_id,
      game: game.game,
      seat: game.seat,
      ply: request.ply,
      position: request.position,
      moveTimeLimitS: request.move_time_limit_s || 0,
    });
  } catch (err) {
    send({ error: { code: 'ERROR_CODE_BOT_RUNTIME_ERROR', game_id: request.game_id, message: String(err.stack || err) } });
    return;
  }
  const move = {
    game_id: request.game_id,
    ply: request.ply,
    action: reply.action,
    think_time_s: Number(process.hrtime.bigint() - started) / 1e9,
    peak_rss_bytes: process.memoryUsage().rss,
  };
  if (reply.think) move.think = reply.think; // {depth, nodes, score, pv, text}
  send({ move });
}

// Plays until the referee says goodbye (exit status 0) or refuses the session (1).
async function run(options, choose) {
  const client = new v1.Referee(options.server, grpc.credentials.createInsecure(), {
    'grpc.keepalive_time_ms': 20000,
    'grpc.keepalive_timeout_ms': 10000,
  });
  const state = { sessionId: '', games: new Map() };
  let delay = 1;
  for (let attempt = 0; attempt < 10; attempt++) {
    const how = await playOnce(client, options, state, choose);
    if (how !== 'dropped') {
      client.close();
      process.exit(how === 'goodbye' ? 0 : 1);
    }
    console.error(`connection lost; trying again in ${delay} s`);
    await new Promise((done) => setTimeout(done, delay * 1000));
    delay = Math.min(delay * 2, 30);
  }
  console.error('gave up reconnecting');
  process.exit(1);
}

// A seeded generator for the bot's random choices: TETROMINO_SEED when set (mulberry32).
function seededRandom() {
  let seed = Number(process.env.TETROMINO_SEED || Math.floor(Math.random() * 2 ** 32)) >>> 0;
  return () => {
    seed = (seed + 0x6d2b79f5) >>> 0;
    let t = seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

module.exports = { optionsFrom, run, seededRandom, PROTOCOL_VERSION };
