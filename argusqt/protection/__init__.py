"""argusqt.protection"""
