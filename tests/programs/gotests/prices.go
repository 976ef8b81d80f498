// Package prices is code under test for polydbg's Go tests by name.
package prices

// Total is the price of quantity items, a tenth off from ten items on (the bug: it never applies).
func Total(unit float64, quantity int) float64 {
	total := unit * float64(quantity)
	if quantity > 10 {
		total *= 0.9
	}
	return total
}

// Average panics on an empty list (the bug: it should answer 0).
func Average(prices []float64) float64 {
	sum := 0.0
	for _, p := range prices {
		sum += p
	}
	return sum / float64(len(prices)) + prices[len(prices)-1]*0 // the panic line
}
