"""Treatment language: the words that say what a decision does to a case it names, and where that case stands.

A cue is a phrase ("overruled", "declined to extend", "is distinguishable") with the side its case is on: `after`
for a verb and its object ("overruled [its decision in] Booth v. Maryland"), `before` for a predicate of the case
("Booth v. Maryland [, which ...,] was overruled"). What may stand between cue and case is spelled out (`OBJECT`,
`SUBJECT`) rather than left to a distance, so "overturned the Ninth Circuit's ruling, which relied on X" links
nothing. A cue under negation or in someone's mouth ("declined to overrule", "asked the Court to overrule",
"should be overruled", "had overruled") is turned (`turn`): declining to overrule is following; the rest says
nothing about what this decision did, unless the duty is the Court's own ("should be, and now is, overruled";
"the Court held that X must be overruled").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from citator.stance.treat.record import RED

NOUNS = (r"(?:decisions?|holdings?|rulings?|opinions?|precedents?|cases?|rule|test|doctrine|standard|principles?|"
          r"approach|framework|methods?|reasoning|logic|analysis|interpretation|exception|presumption|requirement|"
          r"vitality|validity|soundness|viability)")
# A title's corporate ending, which name matching leaves out: "Chevron U.S.A. Inc. v. NRDC, Inc."
ENDING = r"(?:,?\s*(?:Inc|Co|Corp|Ltd|LLC|L\.\s?P)\b\.?)?"
# Between an `after` cue and its case: "its prior decision in", "the rule established in", "the Court's logic in".
OBJECT = re.compile(
    r"\s*(?:in\s+(?:relevant\s+|large\s+)?part\s+)?(?:(?:the|that|those)\s+(?:portions?|parts?)\s+of\s+)?"
    r"(?:(?:its|the|this|that|his|her|their|an?|the\s+(?:Supreme\s+)?Court['’]s|both)\s+)?"
    r"(?:(?:own|prior|previous|earlier|long-?standing|landmark|seminal|\d{4}|controversial|well-known|continuing|"
    rf"continued|[a-z][\w-]*(?=\s+{NOUNS}\b)|"
    r"three-part|two-part|[“\"][^”\"]{1,40}[”\"])\s+)*"
    rf"(?:{NOUNS}\s+(?:\w+\s+){{0,3}}?(?:in|of|from|by|announced\s+in|established\s+(?:by|in)|set\s+(?:forth\s+)?in|"
    r"used\s+in|adopted\s+in|identified\s+in|articulated\s+in|outlined\s+in|recognized\s+in|(?:the\s+)?Court\s+"
    r"(?:had\s+)?(?:identified|established|announced|set)\s+in)\s+)?(?:both\s+)?(?:the\s+)?"
    # a short name before the citation that is the mention: "overruled Booth, 482 U.S. 496"
    r"(?:[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*){0,3},\s+)?$", re.I)
# A relative clause after a case says what the case did, not what is done to it: ", which held otherwise,".
_RELATIVE = (r",\s*(?:which|that|where|(?:in|on|upon|to|for|from|under|by)\s+which|decided|announced|handed\s+down)\s+"
             r"[^.;]{0,160}?,[’'\"”]?")
# Between a case and its `before` cue: "Booth v. Maryland", "'s rule", "(1896)", ", which held otherwise,", "decision".
SUBJECT = re.compile(
    # a title's closing abbreviation ("..., Inc. is overruled") and "supra" stand between too
    rf"{ENDING}\.?\s*(?:\([^()]{{0,40}}\))?\s*(?:,?\s*supra\b)?\s*,?\s*(?:['’]s\s+)?(?:{NOUNS}\s*)?"
    r"(?:and\s+(?:its|their)\s+progeny\s*)?"
    rf"(?:{_RELATIVE})?"
    r"\s*(?:(?:therefore|thus|now|hereby|expressly|explicitly|itself|also|then|must|should|ought\s+to)\s+)*$", re.I)
# "To the extent that X held otherwise, it is overruled": the case is named in the clause, the pronoun is overruled.
_EXTENT = re.compile(r"\b(?:to\s+the\s+extent(?:\s+that)?|insofar\s+as)\s+$", re.I)
_EXTENT_GAP = re.compile(r"[^.;]{1,120}?,\s+(?:it|they)\s+$", re.I)


def fits(pattern: re.Pattern[str], gap: str) -> bool:
    """Whether `gap` (text between a cue and a case, or two cases) is all `pattern`: runs of white space are one
    space first (text from PDFs has long ones, on which the patterns' optional spaces would backtrack for minutes),
    and no gap longer than any pattern allows is tried."""
    return len(gap) <= _LONGEST_GAP and pattern.fullmatch(_SPACES.sub(" ", gap)) is not None


_SPACES = re.compile(r"\s+")
_LONGEST_GAP = 2000


def subject_of(gap: str, lead: str) -> bool:
    """Whether the case that `lead` (its sentence's words just before it) leads to is the subject of a `before`
    cue `gap` after it: "X [, which held ...,] is overruled", "to the extent X held otherwise, it is overruled"."""
    return fits(SUBJECT, gap) or bool(_EXTENT.search(lead) and fits(_EXTENT_GAP, gap))


@dataclass(frozen=True)
class Cue:
    """A phrase saying `treatment`, with its case `side` ("after" or "before") of it."""

    treatment: str
    side: str
    pattern: re.Pattern[str]
    # A predicate said of many things besides cases ("was wrong", "cannot stand"): its case must be its subject,
    # not the object of another noun ("the reliance on X was wrong"), unless that noun is the case's own rule.
    subject_only: bool = False


def _cue(treatment: str, side: str, words: str, subject_only: bool = False) -> Cue:
    return Cue(treatment, side, re.compile(rf"\b(?:{words})\b", re.I), subject_only)


# "is", "was clearly": not "was hardly", "was only".
_BE = (r"(?:is|was|were|are|(?:has|have|had)\s+(?:long\s+|since\s+|already\s+|now\s+)?been|be|been),?\s+"
       r"(?:(?:hereby|now|thus|therefore|also|accordingly|likewise|similarly)\s+|"
       r"(?!(?:hardly|scarcely|barely|only|arguably|possibly|probably)\b)\w+ly,?\s+)?")
CUES: tuple[Cue, ...] = (
    _cue("overrules", "after", r"(?:overruled|overturned),?\s+as\s+(?:is|are)|overrul(?:ed|es|ing|e)|"
                               r"overturn(?:ed|s|ing)?|"
                               # "reversed" alone meets a lower court's judgment; the Court's own decision is named
                               r"revers(?:ed|es|ing)\s+(?:its|the\s+Court['’]s)\s+(?:own\s+)?"
                               r"(?:earlier|prior|previous|former)\s+(?:decisions?|holdings?|rulings?)\s+in"),
    _cue("overrules", "before", rf"{_BE}(?:overruled|overturned)|"
                                # "should be, and now is, overruled": the Court's own act, modal and all
                                r"(?:should|must)\s+be,?\s+and\s+(?:it\s+|they\s+)?(?:now\s+|hereby\s+)?(?:is|are),?\s+"
                                r"(?:hereby\s+)?overruled|"
                                # "Swift v. Tyson, which we overrule today, ..."
                                r"(?:which|that)\s+(?:we|the\s+Court)\s+(?:now\s+|today\s+|hereby\s+|also\s+)?"
                                r"overrul(?:e|es|ed)"),
    _cue("abrogates", "after", r"(?:in\s+effect|effectively|implicitly|essentially)\s+"
                               r"(?:overrul(?:ed|es|ing)|overturn(?:ed|s|ing))|"
                               r"revers(?:ed|es|ing)\s+course\s+(?:from|on)|"
                               r"repudiat(?:e|ed|es|ing)|abrogat(?:e|ed|es|ing)|disavow(?:ed|s|ing)?|"
                               r"abandon(?:ed|s|ing)?|disapprov(?:e|ed|es|ing)(?:\s+of)?|discard(?:ed|s|ing)?|"
                               r"jettison(?:ed|s|ing)?|rece(?:de|ded|des|ding)\s+from|"
                               r"(?:declin(?:e|ed|es|ing)\s+to|no\s+longer)\s+adhere\s+to|"
                               r"withdrew\s+its\s+(?:previous|prior|earlier)\s+opinions?\s+in|"
                               r"no\s+longer\s+follow(?:s|ed)?|declin(?:e|ed|es|ing)\s+to\s+follow|"
                               # "rejected" alone mostly meets a party's argument; a case's rule is named as one
                               r"reject(?:ed|s|ing)?\s+(?:the|its)\s+(?:[\w“”\"-]+\s+){0,2}(?:rule|test|standard|"
                               r"doctrine|approach|reasoning|holding|rationale|framework)\s+(?:of|in|from|used\s+in|"
                               r"set\s+forth\s+in|established\s+in|announced\s+in|adopted\s+in)"),
    _cue("abrogates", "before", rf"{_BE}(?:in\s+effect\s+|effectively\s+)?(?:no\s+longer\s+(?:good\s+law|valid|"
                                r"binding|controlling|authoritative|(?:to\s+be\s+|be\s+)?followed)|wrongly\s+decided|"
                                r"unworkable|repudiated|abrogated|abandoned|discredited|superseded\s+by\s+statute)|"
                                r"(?:has\s+)?prov(?:ed|en)\s+unworkable|"
                                r"no\s+longer\s+(?:be\s+followed|governs|controls)"),
    _cue("abrogates", "before", rf"{_BE}(?:hereby\s+)?(?:no\s+longer\s+the\s+law|wrong|disapproved|discarded|"
                                r"incorrect|erroneous|unsound)|"
                                r"(?:cannot|can\s*not|could\s+not)\s+be\s+(?:reconciled|squared)\s+with|"
                                # "cannot stand for the proposition" limits a case; it does not end it
                                r"(?:(?:can|could)\s*(?:no\s+longer|not)|cannot)\s+(?:stand(?!\s+(?:for|by|alone)\b)|"
                                r"survive)",
         subject_only=True),
    _cue("limits", "after", r"declin(?:e|ed|es|ing)\s+to\s+extend|refus(?:e|ed|es|ing)\s+to\s+extend|"
                            r"(?:limit(?:ed|s|ing)?|confin(?:e|ed|es|ing)|narrow(?:ed|s|ing)?|modif(?:y|ied|ies|ying))|"
                            r"carv(?:e|ed|es|ing)\s+out\s+an\s+exception\s+to|retreat(?:ed|s|ing)?\s+from"),
    _cue("limits", "before", r"(?:does|did|do)\s+not\s+(?:apply|extend|reach|require|constrain)|only\s+appli(?:ed|es)|"
                             rf"{_BE}(?:limited|confined|inapplicable|misplaced|not\s+retroactive)|"
                             r"(?:applies|applied)\s+only|only\s+(?:affirmed|held)"),
    _cue("questions", "after", r"cast(?:s|ing)?\s+(?:\w+\s+)?doubt\s+(?:on|upon)|call(?:ed|s|ing)?\s+into\s+question|"
                               r"question(?:ed|s|ing)\s+(?:the\s+(?:continuing\s+|continued\s+)?"
                               r"(?:validity|vitality|soundness)\s+of)?"),
    _cue("questions", "before", rf"{_BE}(?:called\s+into\s+question|questioned|doubted)"),
    _cue("follows", "after", r"(?:did|does|do)\s+not\s+distinguish\s+(?:the|this|that)\s+(?:case|cases|facts)\s+from"),
    _cue("distinguishes", "after", r"distinguish(?:ed|es|ing)?(?:\s+(?:the|this|that|its|the\s+present|"
                                   r"the\s+instant)\s+(?:case|cases|facts)\s+from)?|unlike(?:\s+in)?|"
                                   r"not\s+governed\s+by|"
                                   r"not\s+controlled\s+by|not\s+analogous\s+to|differ(?:s|ed)?\s+from"),
    _cue("distinguishes", "before", rf"{_BE}(?:distinguishable|inapposite|not\s+controlling)|"
                                    r"(?:does|did)\s+not\s+control|differ(?:s|ed)"),
    _cue("follows", "after", r"not\s+distinguishable\s+from|indistinguishable\s+from|"
                             r"reli(?:ed|es)\s+(?:on|upon)|relying\s+(?:on|upon)|follow(?:ed|s|ing)|"
                             r"appl(?:ied|ies|ying|y)|reaffirm(?:ed|s|ing)?|upheld|uph(?:olds|olding)|"
                             r"in\s+line\s+with|consistent\s+with|in\s+accordance\s+with|under|"
                             r"as\s+(?:interpreted|established|set\s+forth)\s+in|looked\s+to|drawing\s+(?:from|on)|"
                             r"cit(?:ed|ing)|controlled\s+by|governed\s+by|expand(?:ed|ing)|extend(?:ed|ing)|"
                             r"precedent\s+(?:set|established)\s+(?:by|in)|based\s+(?:in\s+part\s+)?on"),
    _cue("follows", "before", r"controls|controlled|governs|governed|appl(?:ies|ied)|barred|bars|requires|"
                              r"required|allows|stands|remains\s+good\s+law|was\s+the\s+proper|"
                              rf"{_BE}(?:binding|controlling|the\s+authority|sufficient)"),
)
# Said before a cue, these take what it says from this decision: a question, an argument, a wish, a hypothesis.
_SOMEONE_ELSE = re.compile(
    r"\b(?:whether|would|should|could|might|may|must|asked|asks|asking|urg\w*|argu\w*|contend\w*|claim\w*|"
    r"sought|seeking|if|without|rather\s+than|invit\w*|petition\w*|had|not|n['’]t|never|no\s+reason\s+to|"
    r"need\s+not|wish\w*|want\w*|dissent\w*|concur\w*|maintain\w*|insist\w*|assert\w*|conced\w*|suggest\w*|"
    r"told|against|nothing|neither|nor|were\s+(?:we|the\s+Court)|assum\w*|suppos\w*)\b[^.;:]{0,30}$", re.I)
# Before a predicate's case, further back: "the State argued in its brief filed last spring that [X was wrong]".
_SAID_THAT = re.compile(r"\b(?:argu|contend|urg|claim|assert|insist|maintain|conced|suggest|complain|told|"
                        r"ask)\w*\b[^.;:]{0,90}\bthat\s+(?:the\s+)?$", re.I)
# After a predicate, in the same sentence: "X was wrong, Justice Thomas wrote in dissent".
_SEPARATE_OPINION = re.compile(r"^[^.;]*?,\s*[^.;,]{0,60}?\b(?:wrote|said|argued|contended|maintained|insisted|"
                               r"observed|noted|added|explained)\b[^.;,]{0,20}?\b(?:dissent|concurr)\w*", re.I)
# A case named after these is no subject of the verb that follows ("the Clause, as interpreted in Crawford, does
# not apply" says nothing of Crawford); "the concerns of Stone did not apply" does. Not for a red cue: "the
# requirement set forth in Williamson County ... is overruled" overrules the case.
_PREPOSITIONS = r"in|under|by|with|from|to|than|on|upon"
_OBJECT_OF = re.compile(rf"\b(?:{_PREPOSITIONS})\s+(?:the\s+)?$", re.I)
# For a `subject_only` cue, "of" too ("the reading of"), unless the noun names the case's own rule.
_OF_ANOTHER = re.compile(rf"\b(?:{_PREPOSITIONS}|of)\s+(?:the\s+)?$", re.I)
_OWN_RULE = re.compile(rf"\b{NOUNS}[’'\"”]?\s+(?:of|in)\s+(?:the\s+)?$", re.I)
_RULE_IN = re.compile(rf"\b{NOUNS}[’'\"”]?\s+(?:\w+\s+){{0,3}}?(?:{_PREPOSITIONS}|of)\s+(?:the\s+)?$", re.I)
# ... but not someone's reading of it: "the Court of Appeals' interpretation of Zant was incorrect".
_THEIR_READING = re.compile(rf"(?<!Court)['’]s?\s+(?:\w+\s+)?{NOUNS}\s+(?:of|in)\s+(?:the\s+)?$", re.I)
# "while Miranda required ..., later statements need not be": what a case required, conceded to be set aside.
_CONCESSIVE = re.compile(r"\b(?:while|although|though|whereas|even\s+if)\s+$", re.I)


def governs(cue: Cue, lead: str) -> bool:
    """Whether a `before` cue can speak of the case that `lead` (its sentence's words just before the case) leads
    to: not as a preposition's object (but a red cue may, after a noun for the case's rule: "the requirement set
    forth in X is overruled", not "the objection under X was overruled"), not a `subject_only` one as another noun's
    object unless that noun is the case's rule, and no "follows" of a case conceded to be set aside."""
    if _OBJECT_OF.search(lead) and (cue.treatment not in RED or not _RULE_IN.search(lead)):
        return False
    if cue.treatment == "follows" and _CONCESSIVE.search(lead):
        return False
    return not (cue.subject_only and _OF_ANOTHER.search(lead)
                and (not _OWN_RULE.search(lead) or _THEIR_READING.search(lead)))


_DECLINED = re.compile(r"\b(?:declin\w*|refus\w*|reject\w*\s+(?:the\s+)?(?:invitation|request|call)s?)\s+to\s*$",
                       re.I)


_MODAL = re.compile(r"\b(?:would|should|could|might|may|must|had|whether|if)\b", re.I)
# "should be, and now is, overruled", and "the Court held that X must be overruled": the duty is the Court's act.
# So is "must" in a sentence that opens with its case and ends with the cue: "Accordingly, X must be overruled."
# The words that open a conclusion ("Accordingly,", "For these reasons,"); refer.py's references take them too.
CONNECTIVE = (r"(?:accordingly|therefore|thus|hence|consequently|in\s+short|in\s+sum|"
              r"for\s+(?:these|those|the\s+foregoing)\s+reasons)")
_DECLARED = re.compile(rf"\s*(?:{CONNECTIVE}\s*,?\s*)?", re.I)
_FIRM = re.compile(r",?\s+and\s+(?:it\s+|they\s+)?(?:now\s+|hereby\s+)?(?:is|are)\b", re.I)
_COURT_HELD = re.compile(r"\b(?:the\s+(?:Supreme\s+)?Court|we|the\s+majority|the\s+plurality)\s+(?:\w+\s+){0,2}?"
                         r"(?:held|holds?|conclude[sd]?|ruled|rules?|decided|decides?|determined|found|finds?|agreed|"
                         r"agrees?)\s+that\s+(?:[^.;]*,\s+and\s+that\s+)?$", re.I)
_DUTY = re.compile(r"\b(?:must|should|ought\s+to)\b", re.I)
# A negation binds within its clause: in "does not confer a right, and that X is overruled" the "not" is done.
_CLAUSE = re.compile(r".*(?:,\s+and\s+(?:that\s+)?|;\s*)", re.S)
# After a cue: someone else did it ("was overruled by Payne", "in part by Payne", "in Payne", "in 1991", "two years
# later", "long ago", "when Payne held ..."); "by today's decision" is this one.
_BY_ANOTHER = re.compile(r"(?:,[^,.;]{0,30},)?(?:\s+in\s+(?:relevant\s+|large\s+|substantial\s+)?part)?\s+"
                         r"(?:by\b(?!\s+(?:today['’]s|this|our|the\s+present)\b)|"
                         r"in\s+(?!(?:Parts?|Sections?)\b)(?:\d{4}|[A-Z])|when\s+(?:[A-Z]|the\s+Court\b|we\b)|"
                         r"(?:(?:\w+\s+){0,3}?(?:later|afterwards?|ago)|subsequently)\b)")
# Before an `after` cue, what makes the act another's or another time's: a lower court as its subject ("the
# district court overruled Booth's objection"), a telling of history ("the Court has previously overruled"), or a
# decision named as its actor ("In Chimel v. California, the Court overruled", "the Court in Crawford abandoned").
# Anyone besides the Court as the verb's subject, a lower court, an agency, a party ("the agency abandoned Chevron
# deference"); not Congress, whose statute can abrogate a decision.
# A State's highest court ("the Florida Supreme Court"), not this one ("A unanimous Supreme Court").
_STATE = ("(?:Alabama|Alaska|Arizona|Arkansas|California|Colorado|Connecticut|Delaware|Florida|Georgia|Hawaii|Idaho|"
          "Illinois|Indiana|Iowa|Kansas|Kentucky|Louisiana|Maine|Maryland|Massachusetts|Michigan|Minnesota|"
          "Mississippi|Missouri|Montana|Nebraska|Nevada|New\\s+Hampshire|New\\s+Jersey|New\\s+Mexico|New\\s+York|"
          "North\\s+Carolina|North\\s+Dakota|Ohio|Oklahoma|Oregon|Pennsylvania|Rhode\\s+Island|South\\s+Carolina|"
          "South\\s+Dakota|Tennessee|Texas|Utah|Vermont|Virginia|Washington|West\\s+Virginia|Wisconsin|Wyoming|"
          "State['’]s|state)")
_ACTORS = (
    r"(?:(?:district|trial|lower|appeals|appellate|circuit|state|county|bankruptcy|habeas|magistrate)\s+"
    r"(?:court|judge)s?|Court\s+of\s+(?:Criminal\s+)?Appeals|(?:First|Second|Third|Fourth|Fifth|Sixth|Seventh|"
    r"Eighth|Ninth|Tenth|Eleventh|D\.\s?C\.|Federal)\s+Circuit|judge|agency|agencies|petitioners?|respondents?|"
    r"government|parties|party|amicus|amici|plaintiffs?|defendants?|counsel|prosecutors?|prosecution|commission|"
    rf"board|scholars|commentators|critics|courts|{_STATE}\s+Supreme\s+Court)"
    r"(?:\s+(?:also|then|had|has|have|later|itself|themselves|below|\w+ly))*")
_OTHER_ACTOR = re.compile(rf"\b{_ACTORS}\s*$", re.I)
# The same actor opening the sentence, an aside after it: "The Florida Supreme Court, applying X, upheld ...".
_ACTOR_FIRST = re.compile(rf"^\s*(?:Conclusion:\s*)?(?:the\s+)?{_ACTORS}\s*,\s*$", re.I)
# Reported speech, a debate or a description earlier in the clause: "Respondent argues that Payne ... abrogated
# Booth", "scholars have debated whether Erie ... repudiated Swift", "Brown is often described as overruling Plessy".
_REPORTED = re.compile(r"\b(?:(?:argu|contend|assert|insist|maintain|claim|suggest)\w*\s+that|(?:ask|urg|invit)\w*\s+"
                       r"(?:us|the\s+Court)\s+to|whether|debat\w*|described\s+as|characteri[sz]ed\s+as|"
                       r"regarded\s+as|understood\s+as|said\s+to\s+have)\b[^.;:]{0,120}$", re.I)
# "the rule of Alleyne, under which Harris was overruled", and a citation's parenthetical "(overruling Bowers)".
_WHICH_LEAD = re.compile(r"\b(?:under|by|in|with|after|through)\s+which\s+$", re.I)
_PARENTHETICAL = re.compile(r"\(\s*$")
# History: the verb in a perfect tense or after a word that dates it ("the Court has previously overruled", "this
# Court long ago abandoned"); not "has" elsewhere in the clause ("its rule has proved unworkable, we overrule X").
_HISTORY = re.compile(r"\b(?:(?:has|have)\s+(?:(?:previously|already|since|long|once|twice|repeatedly|\w+ly)\s+)*|"
                      r"(?:previously|already|once|long\s+ago|in\s+the\s+past|repeatedly|twice|since)\s+)$", re.I)
_NAME = (r"(?<![\w.'’&-])[A-Z][\w.'’&-]{0,40}(?:\s{1,3}(?:of\s{1,3}|the\s{1,3}|and\s{1,3}|for\s{1,3}|&\s{1,3})?"
         r"[A-Z][\w.'’&-]{0,40}){0,6}")
_CASE = rf"{_NAME}(?:\s+v\.?\s+{_NAME})?\s*(?:,\s*\d+\s+U\.\s?S\.\s+\d+)?\s*(?:\(\d{{4}}\))?"
# Words that open a sentence as "In ..., the Court" without naming a case.
_NOT_A_CASE = (r"(?:Addition|Short|Sum|Conclusion|Particular|Response|Contrast|Doing|Reaching|So|Any|Either|Both|"
               r"Light|Turn|Part|General|Fact|Effect|Other|Order|Dissent|Writing|Holding|Practice|Essence|Summary|"
               r"This|That|These|Those|Its|His|Her|Their|Our|Each|Every|Such|Deciding|Ruling|Applying)\b")
# Both are searched in 300 characters (of the sentence's start, of the words before the cue): names are shorter.
_IN_DECISION = re.compile(
    rf"^\s*(?:Conclusion:\s*)?In\s+(?!{_NOT_A_CASE})(?P<a>{_CASE})\s*,\s+(?:the\s+(?:Supreme\s+)?Court|we|this\s+"
    rf"Court|the\s+majority|it|the\s+justices)\b")
_ANOTHER_DECISION = re.compile(
    rf"(?:\b[Tt]he\s+Court\s+in\s+(?P<b>{_CASE})\s|"
    rf"(?P<c>{_NAME}\s+v\.?\s+{_NAME})\s*(?:,\s*\d+\s+U\.\s?S\.\s+\d+)?\s*(?:\(\d{{4}}\))?\s*,?\s*(?:\w+ly\s+)?$|"
    # "Mapp v. Ohio, which overruled Wolf": the relative clause's act is its antecedent's
    rf"(?P<d>{_CASE})\s*,\s*(?:which|that)\s+(?:\w+ly\s+|also\s+|itself\s+)?$)")
# A gerund that opens its clause and a verb after its case: "Overruling Booth would be a mistake" is no act.
_OPENS = re.compile(r"(?:^|[:;(]|\bthat|\bwhether|\bbecause)\s*$", re.I)
_VERB_AFTER = re.compile(r"\s*(?:\([^()]*\)\s*)?(?:,[^,]{0,60},)?\s*(?:would|could|might|may|should|will|is|was|"
                         r"were|are)\b", re.I)


def another_decision(before: str, title: str) -> bool:
    """Whether the clause `before` an `after` cue makes the act another decision's (not the one titled `title`)."""
    m = _IN_DECISION.match(before[:300]) or _ANOTHER_DECISION.search(before[-300:])
    if m is None:
        return False
    named = m.groupdict()
    return not _own(next(v for v in named.values() if v), title)


# Words that tell no case from another: "United States v. Smith" is not "United States v. Jones".
_COMMON_PARTY = frozenset({"united", "states", "state", "people", "commonwealth", "city", "county", "america", "the",
                           "and", "for", "inc", "corp", "company", "rel"})


def _own(name: str, title: str) -> bool:
    """Whether the decision `name` names is the one titled `title` ("Payne" or "Payne v. Tennessee" in Payne's
    own text): every telling word of the name is a word of the title."""
    words = {w.lower() for w in re.findall(r"[A-Za-z]{3,}", re.sub(r",?\s*\d.*$", "", name))} - _COMMON_PARTY
    return bool(words) and words <= {w.lower() for w in re.findall(r"[A-Za-z]{3,}", title)}


def turn(cue: Cue, before: str, cue_text: str, after: str, lead: str = "", rest: str = "", title: str = ""
         ) -> str | None:
    """What a cue says once its surroundings are read. `before`: for an `after` cue, its sentence up to the cue,
    `after` the words up to its case and `rest` the sentence after the case; for a `before` cue, the words between
    its case and the cue, `lead` the words before its case ("the State argued that [Booth was wrongly decided]") and
    `after` the rest of its sentence. `title`: the citing decision's. Declining to overrule is following; what
    someone else said, asked or wished, or what another decision or court did, is no treatment by this one."""
    if _BY_ANOTHER.match(after):
        return None
    if cue.side == "before":
        if cue.treatment in RED and (_WHICH_LEAD.search(lead) or another_decision(lead, title)):
            return None  # "under which X was overruled", "In Payne, the Court held that X must be overruled"
        if _FIRM.search(cue_text) or _COURT_HELD.search(lead):
            before, cue_text = _DUTY.sub("", before), _DUTY.sub("", cue_text)
        elif _DECLARED.fullmatch(lead) and re.fullmatch(r"\s*[.!]?\s*", after):
            before = re.sub(r"\bmust\b", "", before)
        before = re.sub(_RELATIVE, " ", before)  # "X, which asked whether ..., is overruled": the case's words
        clause = lead[m.end():] if (m := _CLAUSE.match(lead)) else lead
        someone_else = (_SOMEONE_ELSE.search(before) or _SOMEONE_ELSE.search(clause) or _SAID_THAT.search(lead)
                        or _SEPARATE_OPINION.match(after))
        return None if _MODAL.search(before + " " + cue_text) or someone_else else cue.treatment
    near = before[-300:]  # what speaks of the cue's act stands near it (and long text is not searched again)
    if another_decision(before, title) or _OTHER_ACTOR.search(near) or _ACTOR_FIRST.match(before):
        return None  # "The Court in Dickerson refused to overrule X", "The Florida Supreme Court, applying X, ..."
    if _DECLINED.search(near):
        return "follows" if cue.treatment in RED else None
    if _SOMEONE_ELSE.search(near):
        return None
    if cue.treatment in RED and (_REPORTED.search(near) or _PARENTHETICAL.search(near) or _HISTORY.search(near)):
        return None
    if cue_text.lower().endswith("ing") and _OPENS.search(near) and _VERB_AFTER.match(rest[:300]):
        return None
    return cue.treatment
