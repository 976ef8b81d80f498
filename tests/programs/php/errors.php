<?php
// Exceptions and PHP's warnings: one caught, one warning, one notice-like deprecation, one uncaught at the end.

namespace App;

class BadInput extends \InvalidArgumentException
{
}

function parse(string $text): int
{
    if (!ctype_digit($text)) {
        throw new BadInput("not a number: $text"); // thrown here
    }
    return (int) $text;
}

function total(array $lines): int
{
    $sum = 0;
    foreach ($lines as $line) {
        try {
            $sum += parse($line);
        } catch (BadInput $e) {
            echo "skipped: ", $e->getMessage(), "\n";
        }
    }
    return $sum;
}

$sum = total(["1", "x", "2"]);
$prices = ["a" => 1];
$missing = $prices["b"] ?? 0;
$warned = $prices["c"] + 1; // warning here
echo "sum $sum $warned\n";
$ratio = intdiv($sum, 0); // uncaught here
echo "never\n";
