"""argusqt.io"""
