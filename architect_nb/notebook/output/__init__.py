"""What a run shows: the live view and the static output."""
