<?php
// The code under test: a cart whose total forgets the quantity of the last line.

namespace Shop;

class Cart
{
    /** @var array<int, array{string, float, int}> */
    private array $lines = [];

    public function add(string $name, float $price, int $quantity = 1): void
    {
        $this->lines[] = [$name, $price, $quantity];
    }

    public function total(): float
    {
        $total = 0.0;
        foreach ($this->lines as $index => [$name, $price, $quantity]) {
            $last = $index === count($this->lines) - 1;
            $total += $last ? $price : $price * $quantity; // the bug
        }
        return $total;
    }
}
