"""argusqt.batch"""
