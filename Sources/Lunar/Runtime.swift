public enum Y {}
