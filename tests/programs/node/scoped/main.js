// Calls a module whose path holds an '@' (a scoped package's directory).
'use strict';
const greet = require('./@acme/greet');
console.log(greet('scoped'));
