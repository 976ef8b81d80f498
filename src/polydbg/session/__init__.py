"""Session layer: state, stops, breakpoints and output of each debugging session."""
