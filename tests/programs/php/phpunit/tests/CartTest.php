<?php
// Tests of the cart: one fails (the bug), one passes.

namespace Shop\Tests;

use PHPUnit\Framework\TestCase;
use Shop\Cart;

class CartTest extends TestCase
{
    public function testTotalCountsQuantities(): void
    {
        $cart = new Cart();
        $cart->add("pen", 1.5, 2);
        $cart->add("book", 10.0, 3);
        $this->assertEquals(33.0, $cart->total()); // fails here
    }

    public function testEmptyCartIsFree(): void
    {
        $this->assertSame(0.0, (new Cart())->total());
    }
}
