"""Which release first shipped each change, from compares and PR references (R3)."""
