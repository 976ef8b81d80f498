package prices

import "testing"

func TestSingleItem(t *testing.T) {
	if got := Total(2.5, 1); got != 2.5 {
		t.Errorf("Total(2.5, 1) = %v, want 2.5", got)
	}
}

func TestBulkDiscount(t *testing.T) {
	quantity := 10
	got := Total(1.0, quantity)
	expected := 9.0
	if got != expected {
		t.Errorf("Total(1.0, %d) = %v, want %v", quantity, got, expected) // bulk check
	}
}

func TestTable(t *testing.T) {
	cases := []struct {
		name     string
		quantity int
		want     float64
	}{
		{"one item", 1, 1.0},
		{"eleven items", 11, 9.9},
		{"ten items", 10, 9.0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Total(1.0, c.quantity)
			if got != c.want {
				t.Fatalf("got %v, want %v", got, c.want) // table check
			}
		})
	}
}

func TestAverageOfNothing(t *testing.T) {
	if got := Average(nil); got != 0 {
		t.Errorf("Average(nil) = %v, want 0", got)
	}
}

func checkEqual(t *testing.T, got, want float64) {
	t.Helper()
	if got != want {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestHelperReportsTheCaller(t *testing.T) {
	discounted := Total(2.0, 10)
	checkEqual(t, discounted, 18.0) // helper check
}
