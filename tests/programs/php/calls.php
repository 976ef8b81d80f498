<?php
// Call traces and raised exceptions (tests/integration/test_php_calls.php): recursion, a throwing function,
// a caught exception, a method, and a step out's return value.
namespace Shop;

class Pricing
{
    public function total(array $prices, float $rate): float
    {
        $sum = 0.0;
        foreach ($prices as $price) {
            $sum += $this->taxed($price, $rate);
        }
        return $sum;
    }

    private function taxed(float $price, float $rate): float
    {
        return round($price * (1 + $rate), 2);
    }
}

function fact(int $n): int
{
    return $n <= 1 ? 1 : $n * fact($n - 1);
}

function parse_qty(string $text): int
{
    if (!ctype_digit($text)) {
        throw new \InvalidArgumentException("not a quantity: $text"); // parse_qty throws
    }
    return (int) $text;
}

function quantities(array $texts): array
{
    $out = [];
    foreach ($texts as $text) {
        try {
            $out[] = parse_qty($text);
        } catch (\InvalidArgumentException $e) {
            $out[] = 0; // swallowed here
        }
    }
    return $out;
}

$f = fact(5); // start
$q = quantities(["3", "x", "7"]);
$t = (new Pricing())->total([10.0, 20.0], 0.1);
$d = doubled([1, 2]);
echo "fact=$f total=$t qty=" . implode(",", $q) . "\n"; // end

function doubled(array $xs): array
{
    return array_map('Shop\twice', $xs); // through PHP's array_map: still one level below
}

function twice(int $x): int
{
    return 2 * $x;
}
