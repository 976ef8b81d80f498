<?php
// The conformance program (the same computation as conformance.py, .c, .js …): prints and exits with 13.

function add($a, $b) { // add starts
    $total = $a + $b; // in add
    return $total;
}

function main($argv) {
    $x = 3;
    $y = 4;
    $s = add($x, $y); // call add
    for ($i = 0; $i < 4; $i++) { // loop
        $s += $i; // loop body
    }
    echo "result $s\n"; // print result
    if (count($argv) > 1) {
        while (true) {
            sleep(60); // with an argument, stay until killed
        }
    }
    return $s;
}

exit(main($argv));
