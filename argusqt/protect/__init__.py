"""argusqt.protect"""
