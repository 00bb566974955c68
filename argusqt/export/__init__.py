"""argusqt.export"""
