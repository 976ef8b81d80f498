'use strict';
// `npm run` a script that runs Node: npm itself is a wrapper, the script's Node is the program to debug.
const { execFileSync } = require('child_process');
const path = require('path');
const out = execFileSync('npm', ['run', '--silent', 'report'], { cwd: path.join(__dirname, '..'), encoding: 'utf8' });
console.log(`npm said: ${out.trim()}`);
