<?php
// Values of every kind, read at the marked line: scalars, a long list, a map, nesting, an object's properties.

namespace Shop;

class Item
{
    public static int $made = 0;
    private array $tags = ["new", "sale"];
    protected ?Item $parent = null;

    public function __construct(public string $name, public float $price)
    {
        self::$made++;
    }
}

function inspect(): int
{
    $count = 42;
    $ratio = 0.5;
    $ready = true;
    $nothing = null;
    $word = "café \"quoted\" \$x";
    $numbers = range(0, 149);
    $prices = ["apple" => 1.25, "pear" => 2.5, 7 => "seven"];
    $nested = ["inner" => ["deep" => [1, 2, 3]]];
    $item = new Item("lamp", 19.99);
    $total = $count + count($numbers); // inspect here
    return $total;
}

echo inspect(), "\n";
