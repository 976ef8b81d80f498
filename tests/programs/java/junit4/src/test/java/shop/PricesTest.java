package shop;

import static org.junit.Assert.assertEquals;

import java.util.Arrays;
import java.util.Collection;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.junit.runners.Parameterized;
import org.junit.runners.Parameterized.Parameters;

@RunWith(Parameterized.class)
public class PricesTest {
    @Parameters(name = "{0} items")
    public static Collection<Object[]> quantities() {
        return Arrays.asList(new Object[][] {{5, 500}, {11, 990}, {10, 900}});
    }

    private final int quantity;
    private final int expected;

    public PricesTest(int quantity, int expected) {
        this.quantity = quantity;
        this.expected = expected;
    }

    @Test
    public void total() {
        Cart cart = new Cart();
        cart.add(100, quantity);
        assertEquals(expected, cart.total());  // parameterized check
    }
}
