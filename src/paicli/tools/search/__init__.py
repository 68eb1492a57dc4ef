"""Which tool definitions a request carries (`offer`) and finding tools by what they do
(`index`)."""
