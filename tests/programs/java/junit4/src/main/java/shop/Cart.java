package shop;

import java.util.ArrayList;
import java.util.List;

/** The code under test: a cart whose bulk discount is off by one (10 items get none). */
public class Cart {
    private final List<Integer> prices = new ArrayList<>();

    public void add(int price, int quantity) {
        if (quantity <= 0) {
            throw new IllegalArgumentException("quantity must be positive, was " + quantity);  // the throw
        }
        for (int i = 0; i < quantity; i++) {
            prices.add(price);
        }
    }

    public int total() {
        int sum = 0;
        for (int price : prices) {
            sum += price;
        }
        return prices.size() > 10 ? sum * 9 / 10 : sum;
    }

    public String label() {
        return prices.size() + " items";
    }
}
