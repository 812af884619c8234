'use strict';
// `node clients/js NAME [--server ...]` runs examples/NAME_bot.js (random, greedy): one
// command that names the whole folder, so the referee's sandbox copies the client with it.
const path = require('path');

const name = process.argv[2] || '';
if (!/^[a-z]+$/.test(name)) {
  console.error('usage: node clients/js random|greedy [--server HOST:PORT] [--token-file FILE]');
  process.exit(2);
}
process.argv.splice(2, 1);
require(path.join(__dirname, 'examples', `${name}_bot.js`));
