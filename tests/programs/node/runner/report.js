'use strict';
const label = `reporter ${process.version.split('.')[0]}`;
console.log(label);
