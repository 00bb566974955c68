"""argusqt.model"""
