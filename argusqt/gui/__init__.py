"""argusqt.gui"""
