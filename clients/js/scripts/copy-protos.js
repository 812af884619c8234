'use strict';
// Copies the repository's protos/ into this folder (run by `npm ci` / `npm install` as the
// `prepare` script), so that the folder is self-contained: the referee's sandbox copies only
// the folder a bot's command names.
const fs = require('fs');
const path = require('path');

const source = process.env.TETROMINO_PROTOS || path.join(__dirname, '..', '..', '..', 'protos');
const target = path.join(__dirname, '..', 'protos');
if (path.resolve(source) !== path.resolve(target) && fs.existsSync(source)) {
  fs.rmSync(target, { recursive: true, force: true });
  fs.cpSync(source, target, { recursive: true, filter: (p) => fs.statSync(p).isDirectory() || p.endsWith('.proto') });
}
