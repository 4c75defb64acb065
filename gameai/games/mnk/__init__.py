"""The m,n,k family: boards where k in a row wins, with or without gravity."""
