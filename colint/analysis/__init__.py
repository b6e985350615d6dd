"""Analysis: ModelSpec (+ hardware profile + scenario) → GEMM inventory, roofline, estimates."""
