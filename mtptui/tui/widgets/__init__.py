"""The dashboard's widgets; each renders plain data handed to it by the main screen."""
