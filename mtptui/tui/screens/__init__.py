"""The dashboard's screens: the main one and the help."""
