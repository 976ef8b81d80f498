package shop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertThrows;

import org.junit.After;
import org.junit.Test;

public class CartTest {
    private Cart cart = new Cart();

    @After
    public void emptied() {
        cart = null;
    }

    @Test
    public void singleItem() {
        cart.add(250, 1);
        assertEquals(250, cart.total());
    }

    @Test
    public void bulkDiscount() {
        int quantity = 10;
        cart.add(100, quantity);
        int expected = 900;
        assertEquals("ten items are discounted", expected, cart.total());  // bulk check
    }

    @Test
    public void label() {
        cart.add(5, 3);
        String shown = cart.label();
        assertEquals("3 item", shown);  // label check
    }

    @Test
    public void totalAfterCleanup() {
        cart.add(100, 10);
        try {
            assertEquals(900, cart.total());  // cleanup check
        } finally {
            cart.add(1, 1);
        }
    }

    @Test
    public void zeroQuantity() {
        cart.add(100, 0);  // refused by the cart
    }

    @Test(expected = IllegalArgumentException.class)
    public void negativeQuantityIsRefused() {
        cart.add(100, -1);
    }

    @Test
    public void refusalIsAsserted() {
        assertThrows(IllegalArgumentException.class, () -> cart.add(1, -2));
    }
}
