"""argusqt.recode"""
