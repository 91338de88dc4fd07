"""Chat channels and the delivery of index suggestions and annotation impacts to them."""
