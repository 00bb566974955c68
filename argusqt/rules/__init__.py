"""argusqt.rules"""
