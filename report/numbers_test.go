package report_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/ctxfold/ctxfold/report"
)

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{
		0: "0", 7: "7", 999: "999", 1000: "1,000", 18402: "18,402", 100000: "100,000",
		1234567: "1,234,567", -5: "-5", -999: "-999", -1000: "-1,000", -1234567: "-1,234,567",
		math.MinInt64: "-9,223,372,036,854,775,808",
	} {
		if got := report.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func ExampleThousands() {
	fmt.Println(report.Thousands(18402), report.Thousands(1048576))
	// Output: 18,402 1,048,576
}
