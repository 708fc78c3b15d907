"""Writers that print the fleet state the way each real tool does (one module per file type)."""
