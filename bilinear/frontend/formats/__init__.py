"""One reader module per catalogue format; :mod:`bilinear.frontend.importers` holds the table of them."""
