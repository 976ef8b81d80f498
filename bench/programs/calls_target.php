<?php
// The call-trace bench's PHP program: work called N times ($argv[1]) in a loop, after a line to stop at first.
function work($i)
{
    return $i * 2; // body
}

function main($n)
{
    $total = 0; // start
    for ($i = 0; $i < $n; $i++) {
        $total += work($i);
    }
    echo $total, "\n";
}

main((int) $argv[1]);
