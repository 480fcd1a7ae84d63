"""Builds the bundled sample exports from the dialogue below (our own text, see README.md).

    .venv/bin/python data/sample/build_sample.py

writes ``chatgpt_conversations.json`` (ChatGPT export layout: mapping tree, null root, hidden
system node, an edited prompt, a regenerated answer, an image part, a code block) and
``claude_conversations.json`` (claude.ai export, 2025 layout with content blocks). Output is
deterministic: ids are derived from the conversation and turn keys.
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
NS = uuid.UUID("6f1d2c3e-0000-4000-8000-00000000c0de")

# (key, parent key or None, role, text); the current leaf is the last turn unless a
# conversation says otherwise. Text may be a dict for a multimodal user turn.
Turn = tuple[str, str | None, str, Any]

CHATGPT: list[dict[str, Any]] = [
    {
        "key": "marathon-plan", "title": "First marathon training plan",
        "start": "2023-03-04T08:10:00",
        "turns": [
            ("u1", None, "user",
             "I've decided to run my first marathon. My goal is to finish the Lisbon Marathon in"
             " October 2024 in under four hours. Right now I run about 20 km a week, mostly easy"
             " 5 km loops along the canal in Manchester. Can you help me build a training plan"
             " that fits around a full-time job as a backend developer?"),
            ("a1", "u1", "assistant",
             "A sub-4 marathon from 20 km a week is realistic with 18 months. Build a base first:"
             " add about 10% per week until you reach 40 km, keep most runs easy, and add one"
             " long run on weekends. After six months, introduce one tempo session a week."),
            ("u2", "a1", "user",
             "The long run is where I always struggle. I start strong and then I bonk around"
             " kilometre 14. I also tend to skip runs when work gets stressful, which is most"
             " weeks before a release."),
            ("a2", "u2", "assistant",
             "Bonking usually means the pace is too fast or you are not fuelling. Run long runs"
             " at conversational pace and take a gel every 40 minutes after the first hour. For"
             " stressful weeks, schedule the run before work so releases cannot eat it."),
            ("u3", "a2", "user",
             "Morning runs it is. I want this marathon to be proof that I can commit to"
             " something long-term, because I have a habit of starting ambitious things and"
             " quietly dropping them after a few weeks."),
            ("a3", "u3", "assistant",
             "That is a good reason to keep the plan visible. Log every run, and judge the week"
             " by consistency rather than pace: four runs done beats one perfect workout."),
        ],
    },
    {
        "key": "ledgerline-idea", "title": "Rust CLI for budgeting",
        "start": "2023-04-15T21:30:00",
        "turns": [
            ("u1", None, "user",
             "I'm starting a side project: Ledgerline, a Rust CLI for budgeting. It should read"
             " my bank's CSV exports, categorise transactions with simple rules, and print a"
             " monthly summary in the terminal. I want to learn Rust properly and I'm tired of"
             " budgeting spreadsheets that I abandon after two months."),
            ("a1", "u1", "assistant",
             "Nice scope. Start with three commands: `import` for the CSV, `rules` to edit"
             " categories, and `report` for the month. Use serde and the csv crate for parsing"
             " and keep the data in a local SQLite file through rusqlite."),
            ("u2", "a1", "user",
             "How should I model a transaction? Amounts make me nervous because of floating"
             " point rounding."),
            ("a2", "u2", "assistant",
             "Store money as integer minor units (pence) and never as f64. For example:\n\n"
             "```rust\n#[derive(Debug, Deserialize)]\npub struct Transaction {\n"
             "    pub date: NaiveDate,\n    pub description: String,\n"
             "    pub amount_minor: i64,\n    pub category: Option<String>,\n}\n```\n\n"
             "Parse the CSV amount as a decimal string and convert it once at import time."),
            ("u3", "a2", "user",
             "That makes sense. My plan is to work on Ledgerline every evening for an hour after"
             " work. Realistically I'll probably reorganise the Trello board instead, which is"
             " what I always do when a task feels big."),
            ("a3", "u3", "assistant",
             "Try ending each session by writing the very next concrete step in a TODO comment."
             " Starting tomorrow's hour from a tiny, obvious task makes it much harder to drift"
             " into reorganising the board."),
        ],
    },
    {
        "key": "spanish-start", "title": "Learning Spanish with a plan",
        "start": "2023-05-20T19:05:00",
        "turns": [
            ("u1", None, "user",
             "I'm learning Spanish because my partner Tomás has family in Seville and I want to"
             " talk with his grandmother without him translating. I'm at A2 level. I do Duolingo"
             " on the tram but I can't hold a real conversation yet."),
            ("a1", "u1", "assistant",
             "Duolingo is fine for vocabulary, but conversation needs speaking practice. Book a"
             " weekly 30-minute session with a tutor and prepare three questions for Tomás's"
             " grandmother each time: family, food, and her town."),
            ("u2", "a1", "user",
             "I believe adults learn languages best through comprehensible input, so I want to"
             " watch Spanish series with Spanish subtitles. Is that enough on its own?"),
            ("a2", "u2", "assistant",
             "Input builds understanding, but speaking is a separate skill. Combine the series"
             " with shadowing: repeat short lines out loud right after the actors. Ten minutes a"
             " day of shadowing helps your pronunciation a lot."),
            ("u3", "a2", "user",
             "My goal is to reach B1 before our trip to Seville next Easter. I'll watch Las"
             " chicas del cable and do the tutor sessions on Thursdays."),
            ("a3", "u3", "assistant",
             "A clear target and a fixed day is a good combination. Keep a notebook of phrases"
             " you actually needed in the tutor sessions; those are the ones to review."),
            ("u4", "a3", "user",
             "I skipped the last two tutor sessions because of a release at work. Whenever my"
             " job gets busy, the first things I drop are Spanish and the side project."),
            ("a4", "u4", "assistant",
             "Then make the tutor session the protected slot: move it to Thursday mornings"
             " before work, when releases can't take it, the same way you run before work."),
        ],
    },
    {
        "key": "remote-work", "title": "Remote work and loneliness",
        "start": "2023-07-08T12:40:00",
        "turns": [
            ("u1", None, "user",
             "I've worked fully remote for three years now. I believe remote work makes me far"
             " more productive, because I get long blocks of deep focus without commuting or"
             " open-office noise. But lately I feel lonely and a bit disconnected from my team."),
            ("a1", "u1", "assistant",
             "Both can be true. Productivity and belonging come from different things. Some"
             " remote workers add a coworking day, regular video pairing sessions, or an"
             " in-person team week each quarter."),
            ("u2", "a1", "user",
             "My company keeps hinting at a return-to-office policy, three days a week. I think"
             " forcing people back into an office is about control, not productivity, and I"
             " would consider leaving if they enforce it."),
            ("a2", "u2", "assistant",
             "It may help to bring data to that discussion: your delivery record, and what you"
             " would need to feel connected without commuting. Proposing an alternative is"
             " usually more effective than only opposing the policy."),
            ("u3", "a2", "user",
             "Good point. I'll suggest a monthly team day instead. Honestly the running club I"
             " joined helps with the loneliness more than any office would."),
            ("a3", "u3", "assistant",
             "That's a healthy mix: a community outside work, and a concrete proposal inside it."
             " The monthly team day is easy for a manager to say yes to."),
        ],
    },
    {
        "key": "long-run-photo", "title": "Long run pacing",
        "start": "2023-09-17T10:55:00",
        "turns": [
            ("u1", None, "user",
             {"image": "file-service://file-LongRunWatch01",
              "text": "Here's my watch after today's 24 km long run. I kept a 6:05 pace and didn't"
                      " bonk for the first time! The marathon training plan is finally working."}),
            ("a1", "u1", "assistant",
             "Congratulations, that's a real milestone. A steady 6:05 over 24 km shows your"
             " aerobic base is there. Sub-4 needs about 5:40 per kilometre on race day, so keep"
             " building long runs slowly and add marathon-pace segments in the last 5 km."),
            ("u2", "a1", "user",
             "I'm worried about my left knee, it aches a little after runs longer than 20 km."),
            ("a2", "u2", "assistant",
             "Mild aches after long runs are common, but don't ignore them. Add two strength"
             " sessions a week (squats, lunges, glute bridges) and see a physiotherapist if the"
             " ache lasts more than a few days or changes how you run."),
            ("u3", "a2", "user",
             "I'll add strength work on Tuesdays and Fridays. Running has become the one habit I"
             " never procrastinate on, which is funny given how I treat my side project."),
            ("a3", "u3", "assistant",
             "Maybe borrow what works: running has a fixed time, a plan, and a visible log."
             " Ledgerline could get the same treatment."),
        ],
    },
    {
        "key": "job-vs-project", "title": "Day job versus side project",
        "start": "2023-11-02T22:15:00",
        "turns": [
            ("u1", None, "user",
             "I'm feeling a real tension between my job and my side project. After eight hours"
             " of backend work I have no energy left for Ledgerline, and on weekends I'd rather"
             " run. I haven't committed any Rust code for three weeks."),
            ("a1", "u1", "assistant",
             "That's a common squeeze. Options: move the side project to mornings, shrink its"
             " scope, or accept a slower pace deliberately instead of feeling guilty about it."),
            ("u2", "a1", "user",
             "Should I just quit the side project? It feels like another thing I started with"
             " enthusiasm and then dropped, like the ukulele and the woodworking course."),
            ("a2", "u2", "assistant",
             "You don't need to decide between all or nothing. Define a small version one:"
             " import a CSV and print a monthly total. Finishing that gives you a real result"
             " and a natural point to decide whether to continue."),
            ("u3", "a2", "user",
             "Okay, version one by the end of the year. I'll do two 45-minute sessions on"
             " Saturday and Sunday mornings, before my long run, instead of evenings."),
            ("a3", "u3", "assistant",
             "A fixed weekend slot is much more realistic than evenings after work. Put it in"
             " your calendar like a meeting you can't skip."),
            ("u3b", "a2", "user",
             "Maybe I should quit my job and freelance so I have time for the side project?"),
            ("a3b", "u3b", "assistant",
             "That's a big jump to solve an energy problem. Try a smaller change first, like a"
             " weekend slot, before changing your income."),
        ],
        "current": "a3",
    },
    {
        "key": "lisbon-move", "title": "Moving to Lisbon",
        "start": "2024-02-10T16:20:00",
        "turns": [
            ("u1", None, "user",
             "Big news: Tomás and I are moving to Lisbon in April 2024. My company agreed I can"
             " keep working remotely from Portugal. I'm excited but overwhelmed by the"
             " paperwork: NIF, residency, a bank account, finding a flat."),
            ("a1", "u1", "assistant",
             "Congratulations! Typical order: get your NIF first (you can do it through a"
             " representative before arriving), then open a bank account, then sign a lease,"
             " and apply for residency once you have an address."),
            ("u2", "a1", "user",
             "We want to live in Arroios or Alvalade, close to a park where I can run. The"
             " Lisbon Marathon is in October, so I'll be training on new routes along the"
             " river."),
            ("a2", "u2", "assistant",
             "Alvalade is quiet and close to Campo Grande park, which is great for easy runs."
             " The riverside path from Cais do Sodré to Belém is flat and perfect for long runs."),
            ("u3", "a2", "user",
             "Funny thing: I've been learning Spanish for a year and now I'm moving to a"
             " Portuguese-speaking country. I still want to keep Spanish for Tomás's family,"
             " but I'll need basic Portuguese for daily life."),
            ("a3", "u3", "assistant",
             "Spanish will help you read Portuguese quickly, though pronunciation is very"
             " different. Focus Portuguese on survival phrases and listening, and keep Spanish"
             " on its Thursday tutor slot so the two don't blur."),
            ("u4", "a3", "user",
             "I keep postponing the residency appointment booking. I've opened the AIMA website"
             " five times and closed it again. Same procrastination pattern as always."),
            ("a4", "u4", "assistant",
             "Make the first step tiny: today, only find the list of documents and put it in a"
             " folder. Booking becomes easier once the vague task has a concrete shape."),
        ],
    },
    {
        "key": "procrastination", "title": "Why I reorganise instead of working",
        "start": "2024-03-21T23:05:00",
        "turns": [
            ("u1", None, "user",
             "I noticed a pattern: whenever a task feels vague, I procrastinate by reorganising."
             " Tonight I spent two hours rebuilding my Notion dashboard instead of packing for"
             " the move or writing the Ledgerline report command."),
            ("a1", "u1", "assistant",
             "Reorganising feels productive, which makes it the perfect hiding place. It often"
             " signals that the next step is unclear. When you catch yourself doing it, ask:"
             " what is the smallest physical action I could take in five minutes?"),
            ("u2", "a1", "user",
             "The same thing happens late at night: I doom-scroll instead of sleeping and then"
             " skip the morning run. Procrastination in the evening costs me the one habit that"
             " works."),
            ("a2", "u2", "assistant",
             "Then protect the evening: a phone curfew at 22:30, charger outside the bedroom,"
             " and running clothes laid out. You're removing decisions from the tired version"
             " of yourself."),
            ("u3", "a2", "user",
             "I'll try the 22:30 curfew. I also want to keep a procrastination log for two"
             " weeks, just noting what I avoided and what I did instead."),
            ("a3", "u3", "assistant",
             "A log is a great idea; patterns become obvious fast. Review it on Sunday and pick"
             " one trigger to design around."),
        ],
    },
    {
        "key": "settling-lisbon", "title": "First month in Lisbon",
        "start": "2024-05-12T17:30:00",
        "turns": [
            ("u1", None, "user",
             "We moved to Lisbon three weeks ago and found a flat in Alvalade. I love the light"
             " and the pastelarias, but working remotely from a new city is lonelier than I"
             " expected. I don't know anyone here apart from Tomás."),
            ("a1", "u1", "assistant",
             "Three weeks is early, so be patient with yourself. A running club is the fastest"
             " way to meet people with a shared routine; Lisbon has several that meet by the"
             " river on weekday evenings."),
            ("u2", "a1", "user",
             "I found a running group that meets in Campo Grande on Wednesdays, and they do a"
             " long run on Sundays. It fits my marathon training plan perfectly."),
            ("a2", "u2", "assistant",
             "Perfect: training and community in one habit. Group long runs also make the"
             " later, harder sessions feel shorter."),
            ("u3", "a2", "user",
             "My Portuguese is terrible, I keep answering in Spanish by accident. People are"
             " kind about it but I feel embarrassed."),
            ("a3", "u3", "assistant",
             "Mixing the two is normal at first. Learn the ten phrases you use most (ordering"
             " coffee, greetings, asking for directions) in Portuguese and drill only those."),
            ("u4", "a3", "user",
             "Work-wise, the time zone is the same as the UK, so meetings are easy. I'm more"
             " convinced than ever that remote work is right for me, as long as I build a"
             " social life outside of it."),
            ("a4", "u4", "assistant",
             "That's a sensible conclusion: remote work for focus, local communities for"
             " connection."),
        ],
    },
    {
        "key": "ledgerline-v1", "title": "Ledgerline report command",
        "start": "2024-06-08T08:30:00",
        "turns": [
            ("u1", None, "user",
             "Ledgerline version one works! It imports my Portuguese bank's CSV and prints a"
             " monthly summary. Now I want the report command to group spending by category and"
             " show a bar chart in the terminal."),
            ("a1", "u1", "assistant",
             "Great milestone. Aggregate with a SQL GROUP BY over the month, then draw bars with"
             " unicode blocks scaled to the terminal width. The ratatui crate helps if you want"
             " an interactive view later."),
            ("u2", "a1", "user",
             "Rent is in euros now but some subscriptions still bill in pounds. How do I handle"
             " two currencies without making the Rust CLI complicated?"),
            ("a2", "u2", "assistant",
             "Store each transaction in its original currency plus a converted amount in your"
             " home currency, with the rate and date you used. Reports then sum the converted"
             " column, and you never lose the original."),
            ("a2b", "u2", "assistant",
             "Keep one currency per account and convert only when printing the report, using a"
             " fixed monthly rate you enter by hand."),
            ("u3", "a2b", "user",
             "I like the idea of entering a monthly rate by hand. Simple beats clever for a"
             " budgeting tool I actually want to use. I'll publish Ledgerline on GitHub once"
             " the report looks nice."),
            ("a3", "u3", "assistant",
             "Publishing gives you a deadline and a reason to write a README, which usually"
             " clarifies the design. Add a sample CSV so others can try it."),
        ],
    },
    {
        "key": "taper", "title": "Marathon taper and race day",
        "start": "2024-09-22T07:45:00",
        "turns": [
            ("u1", None, "user",
             "Four weeks until the Lisbon Marathon. My longest run was 32 km at 5:50 pace and"
             " the knee has been fine since I started strength training. How should I taper?"),
            ("a1", "u1", "assistant",
             "Reduce weekly volume by about 20%, 35% and 50% over the last three weeks, keep a"
             " little marathon-pace running, and sleep more. Don't try anything new on race"
             " day: same shoes, same gels, same breakfast."),
            ("u2", "a1", "user",
             "My race-day plan is to start at 5:45 per kilometre and only speed up after the"
             " 25 km bridge if I feel good. Finishing under four hours would mean a lot: it's"
             " the first long-term goal I've actually seen through."),
            ("a2", "u2", "assistant",
             "That's a smart negative-split plan. Remember that the last 10 km are mostly"
             " mental: break them into 2 km chunks and focus on the next chunk only."),
            ("u3", "a2", "user",
             "During the taper I have so much spare energy that I finally shipped the"
             " multi-currency report in Ledgerline. Less running, more Rust."),
            ("a3", "u3", "assistant",
             "Nice use of the taper. Just don't stay up late coding the week of the race; sleep"
             " matters more than any feature."),
        ],
    },
    {
        "key": "after-marathon", "title": "After the marathon",
        "start": "2024-10-14T18:00:00",
        "turns": [
            ("u1", None, "user",
             "I did it! I finished the Lisbon Marathon in 3:54:12. I cried at the finish line."
             " Eighteen months ago I could barely run 10 km."),
            ("a1", "u1", "assistant",
             "Congratulations, that's a huge achievement, and you hit the sub-4 goal you set in"
             " March 2023. Take at least a week of rest and easy walking before running again."),
            ("u2", "a1", "user",
             "What I learned is that I can commit to something long-term when it has a schedule,"
             " a visible log and a date. I want to apply that to Spanish and to Ledgerline"
             " instead of starting something new."),
            ("a2", "u2", "assistant",
             "That insight is worth more than the medal. Give Spanish and Ledgerline each a"
             " date-bound goal, for example the B2 exam and a public 1.0 release, and a weekly"
             " log like your training log."),
            ("u3", "a2", "user",
             "Then my next goals are the DELE B2 Spanish exam in November 2025 and Ledgerline"
             " 1.0 in spring. No new hobbies until both are done."),
            ("a3", "u3", "assistant",
             "Two goals with dates and a rule against new hobbies: that directly addresses the"
             " pattern of starting things and dropping them."),
        ],
    },
    {
        "key": "remote-revisited", "title": "Rethinking remote work",
        "start": "2025-02-03T13:15:00",
        "turns": [
            ("u1", None, "user",
             "Update on my remote work beliefs: after a year in Lisbon I still think remote"
             " work is more productive for me, but I no longer think the office is only about"
             " control. I joined a coworking space in Alvalade and I really value the casual"
             " conversations."),
            ("a1", "u1", "assistant",
             "That's a nuanced shift: productivity from focus, belonging from people nearby."
             " A coworking space gives you the second without a commute to headquarters."),
            ("u2", "a1", "user",
             "My company did introduce the three-days policy in the UK office, but remote staff"
             " abroad are exempt. I'm staying, and I'm leading the remote team's monthly"
             " online demo day."),
            ("a2", "u2", "assistant",
             "Leading the demo day is a good way to stay visible and connected. It also turns"
             " your earlier proposal into something real."),
            ("u3", "a2", "user",
             "Next goal: the Seville half marathon in spring, and I want to do the race"
             " briefing with the organisers in Spanish."),
            ("a3", "u3", "assistant",
             "That combines your two long-term projects nicely. Practise race vocabulary with"
             " your tutor: dorsal, avituallamiento, salida, meta."),
        ],
    },
]

CLAUDE: list[dict[str, Any]] = [
    {
        "key": "spanish-b2", "title": "Preparing the DELE B2 exam",
        "start": "2025-03-10T19:00:00",
        "turns": [
            ("u1", None, "user",
             "I want to pass the DELE B2 Spanish exam in November 2025. I reached B1 last year,"
             " mostly thanks to the Thursday tutor sessions and watching series. My weak spot"
             " is writing formal emails."),
            ("a1", "u1", "assistant",
             "B1 to B2 in eight months is realistic with steady practice. Write one formal email"
             " a week and have your tutor correct it, and do one timed reading paper every"
             " two weeks."),
            ("u2", "a1", "user",
             "I'll treat it like marathon training: a plan, a weekly log and a fixed date. I"
             " keep procrastinating on the writing tasks though, I always find something to"
             " reorganise first."),
            ("a2", "u2", "assistant",
             "Use the same trick that worked for running: decide the exact time and the exact"
             " task the day before, so the writing session starts without a decision."),
        ],
    },
    {
        "key": "ledgerline-release", "title": "Ledgerline 1.0 release checklist",
        "start": "2025-04-05T09:20:00",
        "turns": [
            ("u1", None, "user",
             "I'm preparing the 1.0 release of Ledgerline, my Rust CLI for budgeting. Three"
             " people on GitHub already use it. What should be on the release checklist?"),
            ("a1", "u1", "assistant",
             "Tag the version, write a changelog, publish to crates.io, add installation"
             " instructions and a sample CSV, and make sure `cargo test` passes on Linux,"
             " macOS and Windows in CI."),
            ("u2", "a1", "user",
             "The tension with my job is much lower now that I work on it on weekend mornings."
             " I think keeping the side project small is what saved it."),
            ("a2", "u2", "assistant",
             "Small scope and a fixed slot is a sustainable combination. After 1.0, consider a"
             " roadmap with only one feature per release."),
        ],
    },
    {
        "key": "seville-half", "title": "Seville half marathon",
        "start": "2025-05-18T20:40:00",
        "turns": [
            ("u1", None, "user",
             "I ran the Seville half marathon in 1:49 and did the race briefing in Spanish."
             " Tomás's grandmother came to watch and we talked for an hour without him"
             " translating. Both long-term goals came together that day."),
            ("a1", "u1", "assistant",
             "What a day: a strong half marathon and a real conversation with her. That's the"
             " original reason you started learning Spanish in 2023."),
        ],
    },
]


def _ts(value: str, offset_s: float) -> float:
    return datetime.fromisoformat(value).replace(tzinfo=UTC).timestamp() + offset_s


def _uid(*parts: str) -> str:
    return str(uuid.uuid5(NS, "/".join(parts)))


def _content(text: Any) -> dict[str, Any]:
    if isinstance(text, dict):
        image = {"content_type": "image_asset_pointer", "asset_pointer": text["image"],
                 "size_bytes": 184320, "width": 1024, "height": 1024, "metadata": {}}
        return {"content_type": "multimodal_text", "parts": [image, text["text"]]}
    return {"content_type": "text", "parts": [text]}


def _chatgpt_message(node: str, role: str, text: Any, ts: float | None) -> dict[str, Any]:
    meta: dict[str, Any] = {"timestamp_": "absolute"}
    if role == "assistant":
        meta.update(model_slug="gpt-4o", finish_details={"type": "stop"})
    return {"id": node, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": ts, "update_time": None, "content": _content(text),
            "status": "finished_successfully", "end_turn": True if role == "assistant" else None,
            "weight": 1.0, "metadata": meta, "recipient": "all"}


def chatgpt_conversation(spec: dict[str, Any]) -> dict[str, Any]:
    key = spec["key"]
    root, system = _uid(key, "root"), _uid(key, "system")
    mapping: dict[str, Any] = {
        root: {"id": root, "message": None, "parent": None, "children": [system]},
        system: {"id": system, "parent": root, "children": [], "message": {
            **_chatgpt_message(system, "system", "", None),
            "metadata": {"is_visually_hidden_from_conversation": True}}},
    }
    for i, (turn, parent, role, text) in enumerate(spec["turns"]):
        node = _uid(key, turn)
        parent_node = _uid(key, parent) if parent else system
        mapping[node] = {"id": node, "parent": parent_node, "children": [],
                         "message": _chatgpt_message(node, role, text,
                                                     _ts(spec["start"], 75.0 * (i + 1)))}
        mapping[parent_node]["children"].append(node)
    last = spec.get("current", spec["turns"][-1][0])
    conv_id = _uid(key)
    return {"title": spec["title"], "create_time": _ts(spec["start"], 0),
            "update_time": _ts(spec["start"], 75.0 * (len(spec["turns"]) + 1)),
            "mapping": mapping, "moderation_results": [], "current_node": _uid(key, last),
            "plugin_ids": None, "conversation_id": conv_id, "default_model_slug": "gpt-4o",
            "is_archived": False, "safe_urls": [], "id": conv_id}


def _iso(value: str, offset_s: float) -> str:
    return datetime.fromtimestamp(_ts(value, offset_s), UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def claude_conversation(spec: dict[str, Any]) -> dict[str, Any]:
    key = spec["key"]
    messages = []
    for i, (turn, parent, role, text) in enumerate(spec["turns"]):
        stamp = _iso(spec["start"], 60.0 * i)
        messages.append({
            "uuid": _uid(key, turn),
            "parent_message_uuid": _uid(key, parent) if parent
            else "00000000-0000-4000-8000-000000000000",
            "sender": "human" if role == "user" else "assistant", "text": text,
            "content": [{"start_timestamp": stamp, "stop_timestamp": stamp, "type": "text",
                         "text": text, "citations": []}],
            "created_at": stamp, "updated_at": stamp, "attachments": [], "files": [],
        })
    return {"uuid": _uid(key), "name": spec["title"], "summary": "",
            "created_at": _iso(spec["start"], 0),
            "updated_at": _iso(spec["start"], 60.0 * len(spec["turns"])),
            "account": {"uuid": _uid("account")}, "chat_messages": messages}


def main() -> None:
    for name, specs, build in (("chatgpt_conversations.json", CHATGPT, chatgpt_conversation),
                               ("claude_conversations.json", CLAUDE, claude_conversation)):
        data = [build(spec) for spec in specs]
        (HERE / name).write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
