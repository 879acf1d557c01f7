local = 1
